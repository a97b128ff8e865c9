package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"

	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// Semaphore cases (Redisson's RedissonSemaphoreTest, plus what latchkey
// does better: waiters are served in order, lost messages are bounded).

// semFast bounds a wake-up that must come from a message, not from the
// wait loop's backstop.
const semFast = wait.Backstop / 3

func init() {
	register("semaphore/wire", func(t *testing.T, e *env) {
		ctx := context.Background()
		c := e.Client()
		ps := semSubscribe(t, e.observer(), "redisson_sc:{"+e.Name+"}")
		sem := semaphore.New(c, e.Name)
		get := func(want string) {
			t.Helper()
			if v := c.Get(ctx, e.Name).Val(); v != want {
				t.Fatalf("GET %s = %q, want %q", e.Name, v, want)
			}
		}
		if ok, err := sem.TrySetPermits(ctx, 3); !ok || err != nil {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		semMessage(t, ps, "3")
		if ok, err := semaphore.New(e.Client(), e.Name).TrySetPermits(ctx, 9); ok || err != nil {
			t.Fatalf("TrySetPermits on a set semaphore = %v, %v; want false", ok, err)
		}
		semOK(t, sem.Acquire(ctx, 2))
		get("1")
		semOK(t, sem.Release(ctx, 2))
		semMessage(t, ps, "3") // the new available count
		semOK(t, sem.AddPermits(ctx, -4))
		get("-1")
		semOK(t, sem.AddPermits(ctx, 5))
		semMessage(t, ps, "4")
		if n, err := sem.DrainPermits(ctx); n != 4 || err != nil {
			t.Fatalf("DrainPermits = %d, %v; want 4", n, err)
		}
		get("0")
		semOK(t, sem.SetPermits(ctx, 2))
		semMessage(t, ps, "2")
	})

	register("semaphore/acquire", func(t *testing.T, e *env) {
		ctx := context.Background()
		c := e.Client()
		h := semHub(t, c)
		sem := semaphore.New(c, e.Name, semaphore.WithHub(h))
		semOK(t, sem.SetPermits(ctx, 1))
		if ok, err := sem.TryAcquire(ctx, 2, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("TryAcquire(2 of 1) = %v, %v; want false", ok, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancelled := semStart(func() error { return sem.Acquire(cctx, 2) })
		semWaiters(t, e, h, 1)
		cancel()
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Acquire = %v", err)
		}
		if n, err := sem.AvailablePermits(ctx); n != 1 || err != nil {
			t.Fatalf("AvailablePermits = %d, %v after a cancelled Acquire; want 1", n, err)
		}

		done := semStart(func() error { return sem.Acquire(ctx, 2) })
		semWaiters(t, e, h, 1)
		semOK(t, semaphore.New(e.Client(), e.Name).Release(ctx, 1)) // another process
		semDone(t, done)
		if n, err := sem.AvailablePermits(ctx); n != 0 || err != nil {
			t.Fatalf("AvailablePermits = %d, %v; want 0", n, err)
		}
	})

	register("semaphore/fit", func(t *testing.T, e *env) {
		// Waiters are served in order: a release of 1 does not let the
		// waiter for 1 overtake the older one for 3.
		ctx := context.Background()
		c := e.Client()
		h := semHub(t, c)
		sem := semaphore.New(c, e.Name, semaphore.WithHub(h))
		big := semStart(func() error { return sem.Acquire(ctx, 3) })
		semQueued(t, c, e.Name, 1)
		small := semStart(func() error { return sem.Acquire(ctx, 1) })
		semQueued(t, c, e.Name, 2)
		semOK(t, semaphore.New(e.Client(), e.Name).Release(ctx, 1))
		select {
		case err := <-small:
			t.Fatalf("the waiter for 1 overtook the one for 3: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		semOK(t, semaphore.New(e.Client(), e.Name).Release(ctx, 2))
		semDone(t, big)
		semOK(t, semaphore.New(e.Client(), e.Name).Release(ctx, 1))
		semDone(t, small)
	})

	register("semaphore/invalid", func(t *testing.T, e *env) {
		ctx := context.Background()
		sem := semaphore.New(e.Client(), e.Name)
		for _, err := range []error{
			sem.Acquire(ctx, 0),
			sem.Release(ctx, -1),
			sem.SetPermits(ctx, -1),
		} {
			if !errors.Is(err, latchkey.ErrInvalidPermits) {
				t.Errorf("err = %v, want ErrInvalidPermits", err)
			}
		}
		if _, err := sem.TryAcquire(ctx, -3, time.Second); !errors.Is(err, latchkey.ErrInvalidPermits) {
			t.Errorf("TryAcquire(-3) = %v, want ErrInvalidPermits", err)
		}
	})
}

func semOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// semHub returns a Hub of c, closed when t ends, whose waiters a case can count.
func semHub(t *testing.T, c redis.UniversalClient) *pubsub.Hub {
	h := pubsub.New(c)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// semWaiters waits until h has n waiters, each with two subscriptions:
// letters to it, and Redisson's releases; polling waiters, which no Hub
// registers, until n are queued on e's semaphore.
func semWaiters(t *testing.T, e *env, h *pubsub.Hub, n int) {
	t.Helper()
	if e.Polling {
		semQueued(t, e.observer(), e.Name, int64(n))
		return
	}
	n *= 2
	for deadline := time.Now().Add(2 * time.Second); h.Stats().Waiters != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters, want %d", h.Stats().Waiters, n)
		}
	}
}

// semQueued waits until n waiters are queued on the semaphore name: a
// waiter takes its place once its letters can reach it.
func semQueued(t *testing.T, c redis.UniversalClient, name string, n int64) {
	t.Helper()
	queue := keys.SemaphoreOf(name).Queue
	for deadline := time.Now().Add(5 * time.Second); c.LLen(context.Background(), queue).Val() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters queued, want %d", c.LLen(context.Background(), queue).Val(), n)
		}
	}
}

// semStart runs f in a goroutine and returns its result's channel.
func semStart(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// semDone waits for a call that a message must end.
func semDone(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		semOK(t, err)
	case <-time.After(semFast):
		t.Fatalf("still blocked after %v", semFast)
	}
}

// semSubscribe subscribes c to channel as Redisson clients do there:
// sharded on a cluster that supports it.
func semSubscribe(t *testing.T, c redis.UniversalClient, channel string) *redis.PubSub {
	t.Helper()
	ctx := context.Background()
	pub, err := rt.Publish(ctx, c, nil)
	semOK(t, err)
	subscribe := c.Subscribe
	if pub == "SPUBLISH" {
		subscribe = c.SSubscribe
	}
	ps := subscribe(ctx, channel)
	t.Cleanup(func() { _ = ps.Close() })
	_, err = ps.Receive(ctx)
	semOK(t, err)
	return ps
}

// semMessage receives the next message of ps and checks its payload.
func semMessage(t *testing.T, ps *redis.PubSub, want string) {
	t.Helper()
	m, err := ps.ReceiveTimeout(context.Background(), 2*time.Second)
	if msg, ok := m.(*redis.Message); err != nil || !ok || msg.Payload != want {
		t.Fatalf("message = %v, %v; want %q", m, err, want)
	}
}
