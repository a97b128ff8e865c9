package fairlock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// testCtx returns a context that ends with t, and at the latest after 60s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var nameSeq atomic.Int64

// lockName returns a lock name unique within the test binary's run.
func lockName() string {
	return fmt.Sprintf("fairlock-test-%d-%d", time.Now().UnixNano(), nameSeq.Add(1))
}

// queueKey and timeoutKey are the Redisson keys of a lock name without "{",
// heartbeatKey latchkey's own.
func queueKey(name string) string     { return "redisson_lock_queue:{" + name + "}" }
func timeoutKey(name string) string   { return "redisson_lock_timeout:{" + name + "}" }
func heartbeatKey(name string) string { return "latchkey_lock_heartbeat:{" + name + "}" }
func channelOf(name, owner string) string {
	return "redisson_lock__channel:{" + name + "}:" + owner
}

// clientMaker makes clients of one server, each like a separate process;
// they are closed, with their latchkey resources, when the test ends.
type clientMaker func() *redis.Client

func makerFor(t *testing.T, addr string) clientMaker {
	return func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() {
			_ = latchkey.Close(c)
			_ = c.Close()
		})
		return c
	}
}

// realServer returns a maker of clients of the shared real server (or skips).
func realServer(t *testing.T) clientMaker {
	return makerFor(t, redistest.SharedServer(t).Addr())
}

// miniServer returns a maker of clients of a fresh miniredis.
func miniServer(t *testing.T) clientMaker {
	mr, _ := redistest.Miniredis(t)
	return makerFor(t, mr.Addr())
}

// backends runs f on miniredis and on the shared real server.
func backends(t *testing.T, f func(t *testing.T, newClient clientMaker)) {
	t.Run("miniredis", func(t *testing.T) { f(t, miniServer(t)) })
	t.Run("redis", func(t *testing.T) { f(t, realServer(t)) })
}

// waitQueued waits until the queue of name holds n waiters.
func waitQueued(t *testing.T, c redis.UniversalClient, name string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.LLen(context.Background(), queueKey(name)).Result()
		if err != nil {
			t.Fatalf("LLEN: %v", err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s has %d waiters, want %d", name, got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// queueState returns the queue's length and the deadline set's size. It
// fails t if the heartbeats name other waiters than those queued, or more
// than them. It reads the three keys in one transaction: an attempt that a
// call whose deadline passed left on its way may still queue its waiter,
// and must not land between the reads.
func queueState(t *testing.T, c redis.UniversalClient, name string) (int64, int64) {
	t.Helper()
	ctx := context.Background()
	var (
		qc     *redis.StringSliceCmd
		zc     *redis.IntCmd
		beatsc *redis.StringSliceCmd
	)
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		qc = p.LRange(ctx, queueKey(name), 0, -1)
		zc = p.ZCard(ctx, timeoutKey(name))
		beatsc = p.ZRange(ctx, heartbeatKey(name), 0, -1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q, z, beats := qc.Val(), zc.Val(), beatsc.Val()
	for _, b := range beats {
		b = memberOwner(b)
		if !slices.Contains(q, b) {
			t.Fatalf("heartbeat of %s, which is not queued (queue %q)", b, q)
		}
	}
	return int64(len(q)), z
}

// addWaiter queues owner by hand, as a Redisson client (or a crashed
// waiter) would have, with the given deadline.
func addWaiter(t *testing.T, c redis.UniversalClient, name, owner string, deadline time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := c.ZAdd(ctx, timeoutKey(name), redis.Z{Score: float64(deadline.UnixMilli()), Member: owner}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.RPush(ctx, queueKey(name), owner).Err(); err != nil {
		t.Fatal(err)
	}
}

// result is what a Lock run in a goroutine reports.
type result struct {
	err error
	at  time.Time
}

// goLock runs lock in a goroutine and returns where its outcome arrives.
func goLock(lock func() error) <-chan result {
	ch := make(chan result, 1)
	go func() {
		err := lock()
		ch <- result{err, time.Now()}
	}()
	return ch
}

// await returns the outcome of a goLock, failing t after timeout.
func await(t *testing.T, ch <-chan result, timeout time.Duration) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(timeout):
		t.Fatalf("no result within %v", timeout)
		return result{}
	}
}

// pending reports whether ch has no outcome yet.
func pending(ch <-chan result) bool { return len(ch) == 0 }

// memberOwner returns the owner of a heartbeat member, <hub id>/<owner>
// or <hub id>/<owner>/<call id>.
func memberOwner(m string) string {
	_, key, _ := strings.Cut(m, "/")
	owner, _, _ := strings.Cut(key, "/")
	return owner
}

// heartbeat returns the heartbeat deadline of latchkey waiter owner.
func heartbeat(c redis.UniversalClient, name, owner string) (float64, error) {
	zs, err := c.ZRangeWithScores(context.Background(), heartbeatKey(name), 0, -1).Result()
	if err != nil {
		return 0, err
	}
	for _, z := range zs {
		if memberOwner(z.Member.(string)) == owner {
			return z.Score, nil
		}
	}
	return 0, redis.Nil
}

// listening reports whether waiter owner listens where it is told: on
// Redisson's channel of its own, or, for a latchkey waiter, on its Hub's.
func listening(c redis.UniversalClient, name, owner string) (bool, error) {
	ctx := context.Background()
	chans := []string{channelOf(name, owner)}
	beats, err := c.ZRange(ctx, heartbeatKey(name), 0, -1).Result()
	if err != nil {
		return false, err
	}
	for _, b := range beats {
		if hub, _, ok := strings.Cut(b, "/"); ok && memberOwner(b) == owner {
			chans = append(chans, "latchkey_lock__channel:{"+name+"}:"+hub)
		}
	}
	n, err := c.PubSubNumSub(ctx, chans...).Result()
	if err != nil {
		return false, err
	}
	for _, ch := range chans {
		if n[ch] > 0 {
			return true, nil
		}
	}
	return false, nil
}

// waitSubscribed waits until the i-th waiter in the queue of name listens
// where it is told, and a little longer, so that it has made the attempt
// that follows its subscription and sleeps.
func waitSubscribed(t *testing.T, c redis.UniversalClient, name string, i int64) {
	t.Helper()
	ctx := context.Background()
	owner, err := c.LIndex(ctx, queueKey(name), i).Result()
	if err != nil {
		t.Fatalf("LINDEX %d: %v", i, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := listening(c, name, owner)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiter %s never subscribed", owner)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
}
