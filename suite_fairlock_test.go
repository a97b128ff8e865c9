package latchkey_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

func init() {
	register("fairlock/lock-unlock", fairLockUnlock)
	register("fairlock/layout", fairLayout)
	register("fairlock/fifo", fairFIFO)
	register("fairlock/not-held", fairNotHeld)
	register("fairlock/reentrant", fairReentrant)
	register("fairlock/cancel-dequeues", fairCancelDequeues)
	register("fairlock/stale-waiter-skipped", fairStaleSkipped)
	register("fairlock/lease-expiry", fairLeaseExpiry)
	register("fairlock/force-unlock-wakes", fairForceUnlockWakes)
	register("fairlock/redisson-deadlines", fairDeadlines)
}

func fairCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fairKeys returns the queue and deadline keys of a fair lock.
func fairKeys(name string) (queue, timeouts string) {
	return keys.Prefix("redisson_lock_queue", name), keys.Prefix("redisson_lock_timeout", name)
}

// fairHeartbeats returns latchkey's heartbeat key of a fair lock.
func fairHeartbeats(name string) string { return keys.Prefix("latchkey_lock_heartbeat", name) }

// fairWaitQueued waits until n waiters are queued for name.
func fairWaitQueued(t *testing.T, c redis.UniversalClient, name string, n int64) {
	t.Helper()
	queue, _ := fairKeys(name)
	deadline := time.Now().Add(5 * time.Second)
	for c.LLen(context.Background(), queue).Val() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %d waiters", queue, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// fairEmptyQueue fails t if anything is left in name's queue keys.
func fairEmptyQueue(t *testing.T, c redis.UniversalClient, name string) {
	flight.Settle() // a waiter that gave up leaves the queue off its caller's path
	t.Helper()
	queue, timeouts := fairKeys(name)
	if n, err := c.Exists(context.Background(), queue, timeouts, fairHeartbeats(name)).Result(); err != nil || n != 0 {
		t.Fatalf("queue keys left: %d, %v", n, err)
	}
}

// fairGo runs f in a goroutine; its error arrives on the returned channel.
func fairGo(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

func fairAwait(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no result within 5s")
		return nil
	}
}

func fairLockUnlock(t *testing.T, e *env) {
	ctx := fairCtx(t)
	m := fairlock.New(e.Client(), e.Name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if locked, err := m.IsLocked(ctx); !locked || err != nil {
		t.Fatalf("IsLocked = %v, %v", locked, err)
	}
	if ok, err := fairlock.New(e.Client(), e.Name).TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("second TryLock = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if locked, _ := m.IsLocked(ctx); locked {
		t.Fatal("locked after Unlock")
	}
}

func fairLayout(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	holder, waiter := latchkey.WithOwner(ctx), latchkey.WithOwner(ctx)
	m := fairlock.New(c, e.Name)
	if err := m.Lock(holder); err != nil {
		t.Fatal(err)
	}
	if v := c.HGet(ctx, e.Name, latchkey.OwnerID(holder)).Val(); v != "1" {
		t.Fatalf("hash field of the holder = %q, want 1", v)
	}
	wctx, cancel := context.WithCancel(waiter)
	done := fairGo(func() error { return fairlock.New(e.Client(), e.Name).Lock(wctx) })
	fairWaitQueued(t, c, e.Name, 1)
	queue, timeouts := fairKeys(e.Name)
	if q := c.LRange(ctx, queue, 0, -1).Val(); !slices.Equal(q, []string{latchkey.OwnerID(waiter)}) {
		t.Fatalf("%s = %q", queue, q)
	}
	if s := c.ZScore(ctx, timeouts, latchkey.OwnerID(waiter)).Val(); int64(s) <= time.Now().UnixMilli() {
		t.Fatalf("waiter's deadline %v is not in the future", int64(s))
	}
	cancel()
	if err := fairAwait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter = %v", err)
	}
	fairEmptyQueue(t, c, e.Name)
	if err := m.Unlock(holder); err != nil {
		t.Fatal(err)
	}
}

func fairFIFO(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	holder := fairlock.New(c, e.Name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const waiters = 4
	var (
		mu    sync.Mutex
		order []int
		errs  []<-chan error
	)
	for i := range waiters {
		m := fairlock.New(e.Client(), e.Name)
		errs = append(errs, fairGo(func() error {
			if err := m.Lock(ctx); err != nil {
				return err
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			return m.Unlock(ctx)
		}))
		fairWaitQueued(t, c, e.Name, int64(i+1))
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ch := range errs {
		if err := fairAwait(t, ch); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{0, 1, 2, 3}; !slices.Equal(order, want) {
		t.Fatalf("acquired in order %v, want %v", order, want)
	}
	fairEmptyQueue(t, c, e.Name)
}

func fairNotHeld(t *testing.T, e *env) {
	ctx := fairCtx(t)
	m := fairlock.New(e.Client(), e.Name)
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Unlock of a free lock = %v", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fairlock.New(e.Client(), e.Name).Unlock(latchkey.WithOwner(ctx)); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("foreign Unlock = %v", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func fairReentrant(t *testing.T, e *env) {
	ctx := latchkey.WithOwner(fairCtx(t))
	m := fairlock.New(e.Client(), e.Name)
	for range 3 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := m.HoldCount(ctx); n != 3 || err != nil {
		t.Fatalf("HoldCount = %d, %v", n, err)
	}
	for range 3 {
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if locked, _ := m.IsLocked(ctx); locked {
		t.Fatal("locked after three Unlocks")
	}
}

func fairCancelDequeues(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	holder := fairlock.New(c, e.Name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := fairlock.New(e.Client(), e.Name).Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v", err)
	}
	fairEmptyQueue(t, c, e.Name)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A waiter that stopped renewing its deadline (a crashed process) does not
// keep anyone waiting once the deadline passed.
func fairStaleSkipped(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	queue, timeouts := fairKeys(e.Name)
	c.ZAdd(ctx, timeouts, redis.Z{Score: float64(time.Now().Add(-time.Second).UnixMilli()), Member: "dead-uuid:1"})
	c.RPush(ctx, queue, "dead-uuid:1")
	m := fairlock.New(c, e.Name)
	if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock behind a dead waiter = %v, %v", ok, err)
	}
	fairEmptyQueue(t, c, e.Name)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func fairLeaseExpiry(t *testing.T, e *env) {
	ctx := fairCtx(t)
	m := fairlock.New(e.Client(), e.Name, fairlock.WithLease(100*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	e.Advance(150 * time.Millisecond)
	if ok, err := fairlock.New(e.Client(), e.Name).TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock after the lease = %v, %v", ok, err)
	}
	select {
	case <-m.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("Done did not close")
	}
	if !errors.Is(m.Err(), latchkey.ErrLost) {
		t.Fatalf("Err = %v", m.Err())
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Unlock after the lease = %v", err)
	}
}

// ForceUnlock wakes the first waiter, which otherwise sleeps for its 10s
// heartbeat: the message reaches it on every backend (sharded pub/sub in
// the cluster).
func fairForceUnlockWakes(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	if err := fairlock.New(c, e.Name).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	w := fairlock.New(e.Client(), e.Name, fairlock.WithLivenessTimeout(30*time.Second))
	done := fairGo(func() error { return w.Lock(ctx) })
	fairWaitQueued(t, c, e.Name, 1)
	time.Sleep(50 * time.Millisecond) // let it subscribe and go to sleep
	if ok, err := w.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	start := time.Now()
	if err := fairAwait(t, done); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the waiter woke %v after ForceUnlock", d)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Redisson's deadline arithmetic, which Redisson clients sharing the queue
// rely on: a waiter's deadline is the one before it plus the wait timeout,
// set once, and an acquisition brings the rest one wait timeout closer.
func fairDeadlines(t *testing.T, e *env) {
	ctx, c := fairCtx(t), e.Client()
	const wait = time.Minute
	holder := fairlock.New(c, e.Name, fairlock.WithWaitTimeout(wait))
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := latchkey.WithOwner(ctx), latchkey.WithOwner(ctx)
	lock := func(own context.Context) <-chan error {
		return fairGo(func() error { return fairlock.New(e.Client(), e.Name, fairlock.WithWaitTimeout(wait)).Lock(own) })
	}
	adone := lock(a)
	fairWaitQueued(t, c, e.Name, 1)
	bdone := lock(b)
	fairWaitQueued(t, c, e.Name, 2)
	_, timeouts := fairKeys(e.Name)
	sa, sb := c.ZScore(ctx, timeouts, latchkey.OwnerID(a)).Val(), c.ZScore(ctx, timeouts, latchkey.OwnerID(b)).Val()
	if d := time.Duration(sb-sa) * time.Millisecond; d != wait {
		t.Fatalf("the second deadline is %v after the first, want the wait timeout, %v", d, wait)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fairAwait(t, adone); err != nil {
		t.Fatal(err)
	}
	if now := c.ZScore(ctx, timeouts, latchkey.OwnerID(b)).Val(); now != sb-float64(wait.Milliseconds()) {
		t.Fatalf("after the first acquisition the second deadline is %v, want %v", int64(now), int64(sb)-wait.Milliseconds())
	}
	if err := fairlock.New(c, e.Name).Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := fairAwait(t, bdone); err != nil {
		t.Fatal(err)
	}
	if err := fairlock.New(c, e.Name).Unlock(b); err != nil {
		t.Fatal(err)
	}
	fairEmptyQueue(t, c, e.Name)
}
