package semaphore_test

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t *testing.T) *redistest.Server { return redistest.SharedServer(t) }

func client(t *testing.T, s *redistest.Server) *redis.Client { return locktest.Client(t, s) }

func mini(t *testing.T) (*miniredis.Miniredis, *redis.Client) { return locktest.Mini(t) }

func hub(t *testing.T, c redis.UniversalClient) *pubsub.Hub { return locktest.Hub(t, c) }

func semName(t *testing.T) string { return locktest.Name(t, "semaphore-test") }

// waitWaiters waits until n Acquire calls wait through h: each listens on
// its Hub's channel for letters and counts Redisson's releases.
func waitWaiters(t *testing.T, h *pubsub.Hub, n int) { t.Helper(); locktest.WaitWaiters(t, h, 2*n) }

// watched returns a handle on the semaphore name with a Hub of its own,
// closed when t ends, so that a test can count its waiters.
func watched(t *testing.T, s *redistest.Server, name string) (*semaphore.Semaphore, *pubsub.Hub) {
	c := client(t, s)
	h := hub(t, c)
	return semaphore.New(c, name, semaphore.WithHub(h)), h
}
