package fairlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

func TestNewPanics(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil client", func() { fairlock.New(nil, "x") }, "nil client"},
		{"zero lease", func() { fairlock.New(c, "x", fairlock.WithLease(0)) }, "WithLease"},
		{"1ns lease", func() { fairlock.New(c, "x", fairlock.WithLease(time.Nanosecond)) }, "WithLease: latchkey: invalid lease: 1ns is below the minimum of 10ms"},
		{"tiny watchdog", func() { fairlock.New(c, "x", fairlock.WithWatchdogTimeout(time.Millisecond)) }, "WithWatchdogTimeout"},
		{"zero wait timeout", func() { fairlock.New(c, "x", fairlock.WithWaitTimeout(0)) }, "WithWaitTimeout"},
		{"tiny liveness timeout", func() { fairlock.New(c, "x", fairlock.WithLivenessTimeout(time.Millisecond)) }, "WithLivenessTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "fairlock: New: ") || !strings.Contains(s, tc.want) {
					t.Fatalf("panic = %v, want fairlock: New: ...%s...", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestLockUnlock(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		m := fairlock.New(c, name)
		if m.Name() != name {
			t.Fatalf("Name = %q", m.Name())
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if locked, err := m.IsLocked(ctx); err != nil || !locked {
			t.Fatalf("IsLocked = %v, %v", locked, err)
		}
		if n, err := m.HoldCount(ctx); err != nil || n != 1 {
			t.Fatalf("HoldCount = %d, %v", n, err)
		}
		if d, err := m.TTL(ctx); err != nil || d <= 0 || d > fairlock.DefaultWatchdogTimeout {
			t.Fatalf("TTL = %v, %v", d, err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-m.Done():
		default:
			t.Fatal("Done not closed after Unlock")
		}
		if m.Err() != nil {
			t.Fatalf("Err after Unlock = %v", m.Err())
		}
		if locked, _ := m.IsLocked(ctx); locked {
			t.Fatal("still locked after Unlock")
		}
		if d, _ := m.TTL(ctx); d != 0 {
			t.Fatalf("TTL of a free lock = %v", d)
		}
		if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("second Unlock = %v, want ErrNotHeld", err)
		}
	})
}

// TestLayout checks the keys against Redisson's layout (§3.3): a first
// waiter's deadline is the holder's lease end plus the wait timeout.
func TestLayout(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		a, b := latchkey.WithOwner(ctx), latchkey.WithOwner(ctx)
		const lease, wait = 10 * time.Second, 2 * time.Second
		m := fairlock.New(c, name, fairlock.WithLease(lease), fairlock.WithWaitTimeout(wait))
		lockedFrom := time.Now()
		if err := m.Lock(a); err != nil {
			t.Fatal(err)
		}
		if v, err := c.HGet(ctx, name, latchkey.OwnerID(a)).Result(); err != nil || v != "1" {
			t.Fatalf("HGET %s owner = %q, %v", name, v, err)
		}
		waiterCtx, cancel := context.WithCancel(b)
		done := goLock(func() error { return m.Lock(waiterCtx) })
		waitQueued(t, c, name, 1)
		q, err := c.LRange(ctx, queueKey(name), 0, -1).Result()
		if err != nil || len(q) != 1 || q[0] != latchkey.OwnerID(b) {
			t.Fatalf("queue = %q, %v; want the waiter", q, err)
		}
		// The waiter joined between lockedFrom and now, when the lock had at
		// most the lease left (miniredis's TTLs do not run down by
		// themselves, so there it had all of it).
		queuedBy := time.Now()
		score, err := c.ZScore(ctx, timeoutKey(name), latchkey.OwnerID(b)).Result()
		lo, hi := lockedFrom.Add(lease+wait).UnixMilli()-1, queuedBy.Add(lease+wait).UnixMilli()+1
		if err != nil || int64(score) < lo || int64(score) > hi {
			t.Fatalf("deadline = %v, %v; want the lease end + %v, in [%d, %d]", int64(score), err, wait, lo, hi)
		}
		beat, err := heartbeat(c, name, latchkey.OwnerID(b))
		if err != nil || time.UnixMilli(int64(beat)).After(time.Now().Add(fairlock.DefaultLivenessTimeout)) {
			t.Fatalf("heartbeat = %v, %v; want at most now + %v", int64(beat), err, fairlock.DefaultLivenessTimeout)
		}
		cancel()
		if r := await(t, done, 5*time.Second); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled Lock = %v", r.err)
		}
		flight.Settle()
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("after cancel: queue %d, deadlines %d; want none", n, z)
		}
		if err := m.Unlock(a); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.Exists(ctx, name, queueKey(name), timeoutKey(name), heartbeatKey(name)).Result(); n != 0 {
			t.Fatalf("%d keys left behind", n)
		}
	})
}

func TestReentrant(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		m := fairlock.New(c, name)
		other := fairlock.New(newClient(), name)
		own := latchkey.WithOwner(ctx)
		for i := range 2 {
			if err := m.Lock(own); err != nil {
				t.Fatalf("Lock %d: %v", i, err)
			}
		}
		if n, err := m.HoldCount(own); err != nil || n != 2 {
			t.Fatalf("HoldCount = %d, %v; want 2", n, err)
		}
		if ok, err := other.TryLock(ctx, 0); ok || err != nil {
			t.Fatalf("other TryLock = %v, %v; want false", ok, err)
		}
		// A plain Lock on the same handle is another owner: it waits.
		if ok, err := m.TryLock(ctx, 20*time.Millisecond); ok || err != nil {
			t.Fatalf("plain TryLock on the holding handle = %v, %v; want false", ok, err)
		}
		if err := m.Unlock(own); err != nil {
			t.Fatal(err)
		}
		if n, _ := m.HoldCount(own); n != 1 {
			t.Fatalf("HoldCount after one Unlock = %d", n)
		}
		if err := m.Unlock(own); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(own); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("third Unlock = %v, want ErrNotHeld", err)
		}
		if ok, err := other.TryLock(ctx, 0); !ok || err != nil {
			t.Fatalf("other TryLock after release = %v, %v", ok, err)
		}
	})
}

func TestUnlockNotHeld(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, name := testCtx(t), lockName()
		m := fairlock.New(newClient(), name)
		other := fairlock.New(newClient(), name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("foreign plain Unlock = %v, want ErrNotHeld", err)
		}
		if err := other.Unlock(latchkey.WithOwner(ctx)); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("foreign owner Unlock = %v, want ErrNotHeld", err)
		}
		if locked, _ := m.IsLocked(ctx); !locked {
			t.Fatal("a foreign Unlock released the lock")
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTryLockOnce: a single attempt never jumps the queue and leaves no trace.
func TestTryLockOnce(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		m := fairlock.New(c, name)
		addWaiter(t, c, name, "java-uuid:1", time.Now().Add(time.Minute))
		if ok, err := m.TryLock(ctx, 0); ok || err != nil {
			t.Fatalf("TryLock(0) with a live waiter queued = %v, %v; want false", ok, err)
		}
		if n, z := queueState(t, c, name); n != 1 || z != 1 {
			t.Fatalf("TryLock(0) changed the queue: %d, %d", n, z)
		}
		c.Del(ctx, queueKey(name), timeoutKey(name))
		if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
			t.Fatalf("TryLock(0) on a free lock = %v, %v", ok, err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCancelLeavesNoEntry(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		holder := fairlock.New(c, name)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		m := fairlock.New(newClient(), name)
		tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := m.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock past its deadline = %v, want DeadlineExceeded", err)
		}
		flight.Settle() // its clean-up runs off the caller's path
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("after a cancelled Lock: queue %d, deadlines %d", n, z)
		}
		if ok, err := m.TryLock(ctx, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("TryLock = %v, %v; want false", ok, err)
		}
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("after a timed-out TryLock: queue %d, deadlines %d", n, z)
		}
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestForceUnlock(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		holder := fairlock.New(c, name, fairlock.WithWatchdogTimeout(300*time.Millisecond))
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		waiter := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(30*time.Second))
		done := goLock(func() error { return waiter.Lock(ctx) })
		waitQueued(t, c, name, 1)
		if ok, err := fairlock.New(c, name).ForceUnlock(ctx); !ok || err != nil {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		// The waiter is woken, not left to its 10s heartbeat.
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		select {
		case <-holder.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the force-unlocked holder's Done did not close")
		}
		if err := holder.Err(); !errors.Is(err, latchkey.ErrLost) {
			t.Fatalf("holder Err = %v, want ErrLost", err)
		}
		if ok, _ := waiter.ForceUnlock(ctx); !ok {
			t.Fatal("second ForceUnlock found nothing")
		}
		if ok, _ := waiter.ForceUnlock(ctx); ok {
			t.Fatal("ForceUnlock of a free lock reported it held")
		}
	})
}

func TestLocker(t *testing.T) {
	c, name := miniServer(t)(), lockName()
	l := fairlock.New(c, name).Locker()
	l.Lock()
	if locked, err := fairlock.New(c, name).IsLocked(context.Background()); !locked || err != nil {
		t.Fatalf("IsLocked while the Locker holds = %v, %v", locked, err)
	}
	l.Unlock()
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("Unlock of an unheld Locker did not panic")
		}
	}()
	l.Unlock()
}
