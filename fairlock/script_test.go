package fairlock

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

// These tests drive fairlock_ops.lua directly, at chosen client times.

func scriptMutex(t *testing.T, opts ...Option) (*Mutex, *redis.Client) {
	_, c := redistest.Miniredis(t)
	return New(c, "job", opts...), c
}

func acquireAt(t *testing.T, m *Mutex, op, id string, now time.Time, reentrant bool) (bool, int64) {
	t.Helper()
	ok, v, err := scripts.Pair(m.run(context.Background(), m.cfg.HubFor(m.client), op, id, now, reentrant))
	if err != nil {
		t.Fatal(err)
	}
	return ok, v
}

// A resent acquisition of a fresh id that was applied succeeds again
// without a second hold; an owner's re-entry counts.
func TestScriptResentAcquisition(t *testing.T) {
	m, c := scriptMutex(t)
	now := time.Now()
	for range 2 {
		if ok, _ := acquireAt(t, m, opAcquire, "a:1", now, false); !ok {
			t.Fatal("not acquired")
		}
	}
	if n := c.HGet(context.Background(), "job", "a:1").Val(); n != "1" {
		t.Fatalf("hold count after a resend = %s, want 1", n)
	}
	if ok, _ := acquireAt(t, m, opAcquire, "a:1", now, true); !ok {
		t.Fatal("re-entry refused")
	}
	if n := c.HGet(context.Background(), "job", "a:1").Val(); n != "2" {
		t.Fatalf("hold count after re-entry = %s, want 2", n)
	}
}

// The retry bounds: a waiter behind a live head gets the heartbeat, even
// when the lock is free (no 0ms retry, no busy polling); behind a head
// close to its deadline, that deadline; the first waiter, the holder's TTL.
func TestScriptRetryBounds(t *testing.T) {
	m, c := scriptMutex(t, WithLivenessTimeout(3*time.Second), WithLease(10*time.Second))
	ctx, now := context.Background(), time.Now()
	ms := func(d time.Duration) int64 { return d.Milliseconds() }

	c.RPush(ctx, "redisson_lock_queue:{job}", "head:1")
	c.ZAdd(ctx, "redisson_lock_timeout:{job}", redis.Z{Score: float64(now.Add(time.Minute).UnixMilli()), Member: "head:1"})
	if ok, v := acquireAt(t, m, opAcquire, "b:1", now, false); ok || v != ms(time.Second) {
		t.Fatalf("behind a live head, lock free = %v, %d; want false, 1000 (the heartbeat)", ok, v)
	}
	c.ZAdd(ctx, "redisson_lock_timeout:{job}", redis.Z{Score: float64(now.Add(400 * time.Millisecond).UnixMilli()), Member: "head:1"})
	if ok, v := acquireAt(t, m, opAcquire, "b:1", now, false); ok || v != 401 {
		t.Fatalf("behind a head 400ms from its deadline = %v, %d; want false, 401", ok, v)
	}
	// The head's deadline passes: it is skipped, and b takes the free lock.
	if ok, _ := acquireAt(t, m, opAcquire, "b:1", now.Add(400*time.Millisecond), false); !ok {
		t.Fatal("the stale head was not skipped")
	}
	// c waits first in line behind b's 10s lease: it sleeps one heartbeat.
	if ok, v := acquireAt(t, m, opAcquire, "c:1", now, false); ok || v != ms(time.Second) {
		t.Fatalf("first in line behind a 10s lease = %v, %d; want false, 1000", ok, v)
	}
	c.PExpire(ctx, "job", 300*time.Millisecond)
	if ok, v := acquireAt(t, m, opAcquire, "c:1", now, false); ok || v < 1 || v > 300 {
		t.Fatalf("first in line behind a 300ms TTL = %v, %d; want false, 1..300", ok, v)
	}
}

// try never queues; acquire queues once, however often it is resent.
func TestScriptTryLeavesNoTrace(t *testing.T) {
	m, c := scriptMutex(t)
	ctx, now := context.Background(), time.Now()
	acquireAt(t, m, opAcquire, "a:1", now, false)
	if ok, _ := acquireAt(t, m, opTry, "b:1", now, false); ok {
		t.Fatal("try took a held lock")
	}
	if n := c.LLen(ctx, "redisson_lock_queue:{job}").Val(); n != 0 {
		t.Fatalf("try queued: %d", n)
	}
	for range 3 {
		acquireAt(t, m, opAcquire, "b:1", now, false)
	}
	if n, z := c.LLen(ctx, "redisson_lock_queue:{job}").Val(), c.ZCard(ctx, "redisson_lock_timeout:{job}").Val(); n != 1 || z != 1 {
		t.Fatalf("queue %d, deadlines %d; want 1, 1", n, z)
	}
}
