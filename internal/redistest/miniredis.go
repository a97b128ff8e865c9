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
