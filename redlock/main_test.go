package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	// Stopped nodes are part of the tests: keep go-redis's dial errors out
	// of the output.
	redis.SetLogger(quiet{})
	redistest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// servers starts n independent real redis-server masters, skipping the test
// (failing it under CI) when none is installed.
func servers(t *testing.T, n int) []*redistest.Server { return redistest.StartServers(t, n) }

// clients returns one new client per server, as a separate process would
// have them; they and latchkey's resources for them are released when t
// ends.
func clients(t *testing.T, ss []*redistest.Server, opts ...func(*redis.Options)) []redis.UniversalClient {
	cs := make([]redis.UniversalClient, len(ss))
	for i, s := range ss {
		c := s.Client(t, opts...)
		t.Cleanup(func() { _ = latchkey.Close(c) })
		cs[i] = c
	}
	return cs
}

// minis starts n miniredis servers.
func minis(t *testing.T, n int) []*miniredis.Miniredis {
	ms := make([]*miniredis.Miniredis, n)
	for i := range ms {
		ms[i], _ = redistest.Miniredis(t)
	}
	return ms
}

// miniClients returns one new client per miniredis server, released when t
// ends.
func miniClients(t *testing.T, ms []*miniredis.Miniredis) []redis.UniversalClient {
	cs := make([]redis.UniversalClient, len(ms))
	for i, m := range ms {
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() {
			_ = latchkey.Close(c)
			_ = c.Close()
		})
		cs[i] = c
	}
	return cs
}

// lockName returns a lock name unique to t.
func lockName(t *testing.T) string { return "redlock-test:" + t.Name() }

// holders returns, for each node, the owner fields of the lock hash name.
func holders(t *testing.T, cs []redis.UniversalClient, name string) [][]string {
	t.Helper()
	out := make([][]string, len(cs))
	for i, c := range cs {
		fields, err := c.HKeys(context.Background(), name).Result()
		if err != nil {
			t.Fatalf("node %d: HKEYS: %v", i, err)
		}
		out[i] = fields
	}
	return out
}

// held returns how many nodes have the lock key.
func held(t *testing.T, cs []redis.UniversalClient, name string) int {
	t.Helper()
	n := 0
	for _, fs := range holders(t, cs, name) {
		if len(fs) > 0 {
			n++
		}
	}
	return n
}

// closedWithin reports whether c is closed within d.
func closedWithin(c <-chan struct{}, d time.Duration) bool {
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}

// isClosed reports whether c is closed now.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// eventually reports whether cond holds within d, checking every 10ms.
func eventually(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
