package rwlock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// server returns the package's shared real redis-server, skipping the test
// (failing it under CI) when none is installed.
func server(t *testing.T) *redistest.Server { return redistest.SharedServer(t) }

func client(t *testing.T, s *redistest.Server) *redis.Client { return locktest.Client(t, s) }

// lockName returns a lock name unique to t.
func lockName(t *testing.T) string { return "rwlock-test:" + t.Name() }

// timeoutKey is Redisson's timeout key of read hold i of owner on name.
func timeoutKey(name, owner string, i int) string {
	return "{" + name + "}:" + owner + ":rwlock_timeout:" + strconv.Itoa(i)
}

// waitSubscribers waits until channel has n subscriber connections.
func waitSubscribers(t *testing.T, c *redis.Client, channel string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c.PubSubNumSub(context.Background(), channel).Val()[channel] >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d subscribers on %s", n, channel)
}

// within waits up to d for ch to deliver, failing t otherwise.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
		panic("unreachable")
	}
}

// channelOf is the lock's Redisson channel.
func channelOf(name string) string { return "redisson_rwlock:{" + name + "}" }

// must fails t at the first non-nil error of errs.
func must(t *testing.T, errs ...error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
}
