// Package locktest holds the test helpers the primitives' tests share: clients
// that release latchkey's resources when the test ends, unique names, and
// waits on a Hub's waiters. It is for tests only.
package locktest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// Client returns a new client of s, as a separate process would have one;
// it and latchkey's resources for it are released when t ends.
func Client(t testing.TB, s *redistest.Server) *redis.Client {
	c := s.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return c
}

// ClusterClient returns a new client of the cluster cl; it and latchkey's
// resources for it are released when t ends.
func ClusterClient(t testing.TB, cl *redistest.Cluster) *redis.ClusterClient {
	c := cl.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return c
}

// Mini returns a miniredis server and a client of it, released when t ends.
func Mini(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	mr, c := redistest.Miniredis(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return mr, c
}

// Hub returns a Hub of c closed when t ends, so that a test can count the
// waiters of one handle.
func Hub(t testing.TB, c redis.UniversalClient) *pubsub.Hub {
	h := pubsub.New(c)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

var seq atomic.Int64

// Name returns a key name unique to this run of t, under prefix.
func Name(t testing.TB, prefix string) string {
	return fmt.Sprintf("%s:%s:%d:%d", prefix, t.Name(), time.Now().UnixNano(), seq.Add(1))
}

// WaitWaiters waits until h has n waiters, failing t after 5s.
func WaitWaiters(t testing.TB, h *pubsub.Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.Stats().Waiters != n {
		if time.Now().After(deadline) {
			t.Fatalf("hub has %d waiters, want %d", h.Stats().Waiters, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// ExpectOrder fails t unless the names on order arrive as want, in turn,
// each within 10s: the order in which waiters acquired.
func ExpectOrder(t testing.TB, order <-chan string, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-order:
			if got != w {
				t.Fatalf("%s acquired before %s, which queued first", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never acquired", w)
		}
	}
}
