package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// java is the client id of a Java client in Redisson's layout, written by
// hand: a process that died queued.
const java = "5b0e2a4c-3d8f-4c1e-9a7b-2f6d8e1c0a93"

// soon bounds how fast an eviction must serve the waiter it freed: well
// under every dead entry's deadline (a minute and more).
const soon = 5 * time.Second

func testEvict(t *testing.T, c cli, rdb redis.UniversalClient) {
	t.Run("fairlock", func(t *testing.T) { testEvictFair(t, c, rdb) })
	t.Run("mutex", func(t *testing.T) { testEvictMutex(t, c, rdb) })
	t.Run("semaphore", func(t *testing.T) { testEvictSemaphore(t, c, rdb) })
	t.Run("permitsemaphore", func(t *testing.T) { testEvictPermits(t, c, rdb) })
	t.Run("rwlock", func(t *testing.T) { testEvictWriter(t, c, rdb) })
}

// evicted runs evict -yes and expects it to succeed.
func (c cli) evicted(t *testing.T, name, id string) {
	t.Helper()
	out, errOut, code := c.run(t, "evict", "-yes", name, id)
	if code != 0 || !strings.Contains(out, "evicted "+id) {
		t.Fatalf("evict %s %s: exit %d: %s%s", name, id, code, out, errOut)
	}
}

// got waits for w to acquire, at most within.
func got(t *testing.T, w *waiter, what string, within time.Duration) {
	t.Helper()
	select {
	case <-w.got:
	case <-time.After(within):
		t.Fatalf("%s: not served within %v of the eviction", what, within)
	}
}

// A dead Java waiter heads the queue of a free fair lock, a Go waiter
// behind it: evicting it serves the Go waiter at once.
func testEvictFair(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "fair")
	l := namesOf(name).lock
	defer rdb.Del(context.Background(), l.FairQueue, l.FairDeadlines, l.Heartbeats)
	dead := java + ":7"
	rdb.RPush(ctx, l.FairQueue, dead)
	rdb.ZAdd(ctx, l.FairDeadlines, redis.Z{Score: float64(time.Now().Add(5 * time.Minute).UnixMilli()), Member: dead})

	if _, _, code := c.run(t, "evict", "-yes", name, java+":8"); code != exitNothing {
		t.Errorf("evict of a waiter not queued: exit %d, want %d", code, exitNothing)
	}
	if _, _, code := c.run(t, "evict", name, dead); code != exitNotConfirmed {
		t.Errorf("evict without -yes: exit %d, want %d", code, exitNotConfirmed)
	}
	f := fairlock.New(rdb, name)
	w := wait(f.Lock, f.Unlock)
	defer w.stop()
	queued(t, rdb, l.FairQueue, 2)
	select {
	case <-w.got:
		t.Fatal("the Go waiter got the lock past the dead head")
	case <-time.After(100 * time.Millisecond):
	}
	c.evicted(t, name, dead)
	got(t, w, "the Go waiter behind a dead Java head", soon)

	w.stop() // the lock is free again

	// A dead Java waiter heads the queue again, a live one behind it:
	// evicting the dead one wakes the live one on its own channel, as
	// Redisson's unlock would.
	dead, next := java+":10", java+":11"
	deadline := time.Now().Add(5 * time.Minute).UnixMilli()
	rdb.RPush(ctx, l.FairQueue, dead, next)
	rdb.ZAdd(ctx, l.FairDeadlines, redis.Z{Score: float64(deadline), Member: dead}, redis.Z{Score: float64(deadline + 300000), Member: next})
	sub := subscribe(t, rdb, l.Channel+":"+next)
	c.evicted(t, name, dead)
	select {
	case msg := <-sub.Channel():
		if msg.Payload != "0" {
			t.Errorf("the Java waiter was told %q, want 0", msg.Payload)
		}
	case <-time.After(soon):
		t.Fatal("the Java waiter now first in line was not woken on its channel")
	}
	if st := c.inspect(t, name); len(st.Queue) != 1 || st.Queue[0].Owner != next {
		t.Errorf("after evicting the dead head: %+v", st.Queue)
	}
}

// A dead latchkey entry heads the queue of a mutex whose holder then
// died too: the lock is free, and the live waiter behind waits its turn.
func testEvictMutex(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "mutex")
	l := namesOf(name).lock
	defer rdb.Del(context.Background(), l.Queue, l.Deadlines)
	holder := mutex.New(rdb, name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	deadOwner := "0f1e2d3c-4b5a-4968-8776-655443322110:1"
	entry := "deadhub/" + deadOwner + "/1"
	rdb.RPush(ctx, l.Queue, entry)
	rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
	m := mutex.New(rdb, name)
	w := wait(m.Lock, m.Unlock)
	defer w.stop()
	queued(t, rdb, l.Queue, 2)
	rdb.Del(ctx, name) // the holder's lease ran out: nothing was published
	if st := c.inspect(t, name); len(st.Holders) != 0 || len(st.Queue) != 2 || st.Queue[0].Owner != deadOwner {
		t.Fatalf("inspect: %+v", st)
	}
	c.evicted(t, name, deadOwner)
	got(t, w, "the waiter behind a dead head", time.Second) // its own look comes in 5s
}

// A dead waiter for 2 permits heads the queue of a semaphore with 1
// available; a live waiter for 1 waits behind it.
func testEvictSemaphore(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "sem")
	s := semaphore.New(rdb, name)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	l := namesOf(name).sem
	entry := "deadhub/2/deadkey"
	rdb.RPush(ctx, l.Queue, entry)
	rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
	w := wait(func(ctx context.Context) error { return s.Acquire(ctx, 1) }, func(ctx context.Context) error { return s.Release(ctx, 1) })
	defer w.stop()
	queued(t, rdb, l.Queue, 2)
	c.evicted(t, name, "deadkey")
	got(t, w, "the waiter for 1 permit behind a dead waiter for 2", soon)
}

// The same for a permit semaphore, whose dead waiter's entry names the
// ids of the 2 permits it asked for.
func testEvictPermits(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "pes")
	s := permitsemaphore.New(rdb, name)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	l := namesOf(name).sem
	first := strings.Repeat("ab", 16)
	entry := "deadhub/" + first + strings.Repeat("cd", 16)
	rdb.RPush(ctx, l.Queue, entry)
	rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
	w := wait(func(ctx context.Context) error {
		_, err := s.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		return err
	}, func(context.Context) error { return nil })
	defer w.stop()
	queued(t, rdb, l.Queue, 2)
	// With no permit held, its layout is a plain integer's but for the
	// queue: inspect wants -kind, evict reads the queue's entries.
	if st := c.inspect(t, name, "-kind", "permitsemaphore"); len(st.Queue) != 2 || st.Queue[0].Owner != first || st.Queue[0].Permits != 2 {
		t.Fatalf("inspect: %+v", st.Queue)
	}
	c.evicted(t, name, first)
	got(t, w, "the waiter for 1 permit behind a dead waiter for 2", soon)
}

// A dead writer's mark holds new readers back.
func testEvictWriter(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "rw")
	r1 := rwlock.New(rdb, name)
	if err := r1.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r1.RUnlock(context.Background()) }()
	writers := namesOf(name).rw.Writers
	rdb.ZAdd(ctx, writers, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: "deadwriter"})
	r2 := rwlock.New(rdb, name)
	w := wait(r2.RLock, r2.RUnlock)
	defer w.stop()
	select {
	case <-w.got:
		t.Fatal("a reader entered past a waiting writer")
	case <-time.After(200 * time.Millisecond):
	}
	c.evicted(t, name, "deadwriter")
	got(t, w, "the reader held back by a dead writer", soon)
}

// subscribe listens on channel as a Redisson client does: SSUBSCRIBE on a
// cluster (Redis 7 and later, as the tests' servers are), else SUBSCRIBE.
func subscribe(t *testing.T, rdb redis.UniversalClient, channel string) *redis.PubSub {
	t.Helper()
	var sub *redis.PubSub
	if _, ok := rdb.(*redis.ClusterClient); ok {
		sub = rdb.SSubscribe(t.Context(), channel)
	} else {
		sub = rdb.Subscribe(t.Context(), channel)
	}
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	return sub
}
