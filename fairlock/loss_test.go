package fairlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// TestLeaseExpiry: a fixed lease that runs out ends the hold as lost, and
// the first waiter takes the lock when it does, not at its heartbeat.
func TestLeaseExpiry(t *testing.T) {
	newClient := realServer(t)
	ctx, c, name := testCtx(t), newClient(), lockName()
	const lease = 200 * time.Millisecond
	m := fairlock.New(c, name, fairlock.WithLease(lease))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
	done := goLock(func() error { return w.Lock(ctx) })
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not close when the lease ran out")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", err)
	}
	r := await(t, done, 5*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("lease %v: the waiter got the lock %v after it was taken", lease, r.at.Sub(start).Round(time.Millisecond))
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Unlock after loss = %v, want ErrNotHeld", err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWatchdogKeepsHold: without a lease the watchdog renews the hold.
// (Every third of the timeout: a renewal may come two thirds of it late, as
// on a loaded machine, whose timers run late.)
func TestWatchdogKeepsHold(t *testing.T) {
	newClient := realServer(t)
	ctx, c, name := testCtx(t), newClient(), lockName()
	const timeout = 1500 * time.Millisecond
	m := fairlock.New(c, name, fairlock.WithWatchdogTimeout(timeout))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * timeout)
	if n, err := m.HoldCount(ctx); n != 1 || err != nil {
		t.Fatalf("HoldCount after 2 watchdog timeouts = %d, %v", n, err)
	}
	select {
	case <-m.Done():
		t.Fatalf("hold lost: %v", m.Err())
	default:
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCrashedHolderChild is the holder that TestCrashedHolder kills.
func TestCrashedHolderChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("runs only as a child of TestCrashedHolder")
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("FAIRLOCK_ADDR")})
	m := fairlock.New(c, os.Getenv("FAIRLOCK_NAME"), fairlock.WithWatchdogTimeout(500*time.Millisecond))
	if err := m.Lock(context.Background()); err != nil {
		fmt.Println("ERROR", err)
		return
	}
	fmt.Println("LOCKED")
	time.Sleep(time.Minute)
}

// TestCrashedHolder: the watchdog keeps a live holder's lock; once its
// process is SIGKILLed the lock expires with the watchdog timeout and the
// first waiter takes it then, sleeping on the TTL rather than its heartbeat.
func TestCrashedHolder(t *testing.T) {
	if redistest.IsChild() {
		t.Skip("not in a child")
	}
	srv := redistest.SharedServer(t)
	ctx, c, name := testCtx(t), makerFor(t, srv.Addr())(), lockName()
	child := redistest.StartChild(t, "TestCrashedHolderChild", "FAIRLOCK_ADDR="+srv.Addr(), "FAIRLOCK_NAME="+name)
	child.WaitLine(t, "LOCKED", 30*time.Second)
	w := fairlock.New(c, name, fairlock.WithLivenessTimeout(longWait))
	done := goLock(func() error { return w.Lock(ctx) })
	time.Sleep(time.Second) // two watchdog timeouts: the live holder keeps it
	if !pending(done) {
		t.Fatal("the waiter took the lock from a live holder")
	}
	child.Kill()
	killed := time.Now()
	r := await(t, done, 10*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("holder killed: the waiter got the lock %v later (watchdog timeout 500ms)", r.at.Sub(killed).Round(time.Millisecond))
	if d := r.at.Sub(killed); d > 3*time.Second {
		t.Fatalf("the waiter got the lock %v after the holder died", d)
	}
}

// TestHammer: goroutines on several clients and handles, some reentrant,
// some giving up, never find anyone else inside, and lose no increment.
func TestHammer(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, name := testCtx(t), lockName()
		const workers, rounds = 8, 15
		clients := []redis.UniversalClient{newClient(), newClient(), newClient()}
		shared := fairlock.New(clients[0], name)
		var (
			inside, violations atomic.Int32
			counter, want      atomic.Int64
			wg                 sync.WaitGroup
			errs               = make(chan error, workers)
		)
		for w := range workers {
			m := shared
			if w%2 == 1 {
				m = fairlock.New(clients[w%3], name)
			}
			wg.Go(func() {
				for r := range rounds {
					lctx := ctx
					if w%4 == 3 {
						lctx = latchkey.WithOwner(ctx)
					}
					if r%5 == 4 { // a waiter that gives up quickly
						tctx, cancel := context.WithTimeout(lctx, time.Millisecond)
						err := m.Lock(tctx)
						cancel()
						if err == nil {
							_ = m.Unlock(lctx)
						} else if !errors.Is(err, context.DeadlineExceeded) {
							errs <- err
							return
						}
						continue
					}
					if err := m.Lock(lctx); err != nil {
						errs <- err
						return
					}
					if inside.Add(1) != 1 {
						violations.Add(1)
					}
					v := counter.Load()
					runtime.Gosched()
					counter.Store(v + 1)
					want.Add(1)
					inside.Add(-1)
					if err := m.Unlock(lctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if v := violations.Load(); v != 0 {
			t.Fatalf("%d holders found someone else inside", v)
		}
		if counter.Load() != want.Load() {
			t.Fatalf("counter = %d, want %d", counter.Load(), want.Load())
		}
		// What a waiter that gave up left is undone in the background:
		// give that a moment (a loaded machine once left an entry).
		n, z := queueState(t, clients[0], name)
		for deadline := time.Now().Add(2 * time.Second); (n != 0 || z != 0) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			n, z = queueState(t, clients[0], name)
		}
		if n != 0 || z != 0 {
			t.Fatalf("queue %d, deadlines %d left", n, z)
		}
	})
}

// TestNoGoroutineLeak: waiting, cancelling, holding with the watchdog and
// with a lease leave no goroutine behind once the client is closed.
func TestNoGoroutineLeak(t *testing.T) {
	addr := realServer(t)().Options().Addr // starts the shared server first
	before := goleak.IgnoreCurrent()
	func() {
		ctx, name := testCtx(t), lockName()
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		defer latchkey.Close(c)
		a := fairlock.New(c, name)
		b := fairlock.New(c, name, fairlock.WithLease(time.Minute))
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		if err := b.Lock(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock = %v", err)
		}
		cancel()
		done := goLock(func() error { return b.Lock(ctx) })
		waitQueued(t, c, name, 1)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	goleak.VerifyNone(t, before)
}
