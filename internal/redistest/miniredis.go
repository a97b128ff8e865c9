package redistest

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Miniredis starts an in-process miniredis server and returns it with a
// client connected to it. Both are closed by t.Cleanup. Unlike the other
// helpers, Miniredis needs no redis-server and never skips t.
func Miniredis(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), DialTimeout: clientDialTimeout})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// ExampleClient starts an in-process miniredis and returns a client of it,
// standing in for redis.NewClient(&redis.Options{Addr: "localhost:6379"}) in
// runnable examples, which have no testing.T. The returned function closes
// the client and the server; examples call latchkey.Close(client) first, as
// programs should.
func ExampleClient() (*redis.Client, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), DialTimeout: clientDialTimeout})
	return c, func() {
		_ = c.Close()
		m.Close()
	}
}
