package fairlock_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
)

// A release grants the fair lock to the latchkey waiter first in line: it
// returns from Lock on the release's letter without an attempt of its own,
// with the next fencing token, which the letter carries; it holds an
// ordinary Redisson hold (count 1), has left the queue, and extends the
// grant's short lease to its own soon after.
func TestGrantOneTrip(t *testing.T) {
	newClient := realServer(t)
	ctx, name := testCtx(t), lockName()
	c := newClient()
	a := fairlock.New(newClient(), name)
	// b's attempts name the queue; the take that extends its grant later
	// (off Lock's path, maybe before this test looks) does not.
	attempts := locktest.Commands{Key: queueKey(name)}
	bc := newClient()
	bc.AddHook(&attempts)
	b := fairlock.New(bc, name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	held := a.Token()
	done := goLock(func() error { return b.Lock(ctx) })
	waitQueued(t, c, name, 1)
	waitSubscribed(t, c, name, 0)
	// b joined the queue, then looked again once subscribed; then it
	// sleeps until a message comes.
	for deadline := time.Now().Add(10 * time.Second); attempts.N() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter made %d attempts in 10s, want 2 before it sleeps", attempts.N())
		}
	}
	before := attempts.N()
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if r := await(t, done, 5*time.Second); r.err != nil {
		t.Fatal(r.err)
	}
	if n := attempts.N() - before; n != 0 {
		t.Errorf("the granted waiter made %d attempts before Lock returned, want 0", n)
	}
	if tok := b.Token(); tok != held+1 || counter(t, c, name) != tok {
		t.Errorf("granted token %d, counter %d; want both the next after %d", tok, counter(t, c, name), held)
	}
	if fields := c.HGetAll(ctx, name).Val(); len(fields) != 1 {
		t.Fatalf("lock hash after the grant = %v, want one owner", fields)
	}
	if n, z := queueState(t, c, name); n != 0 || z != 0 {
		t.Errorf("queue %d, deadlines %d after the grant; want none", n, z)
	}
	time.Sleep(handoff.Grace)
	if ttl := c.PTTL(ctx, name).Val(); ttl < 20*time.Second {
		t.Errorf("PTTL %v after the grace: the grant was not extended to the 30s lease", ttl)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// An owner granted the lock that re-enters at once, before its grant was
// extended, counts two holds: the re-entry is not taken for the grant.
func TestGrantThenReenter(t *testing.T) {
	newClient := realServer(t)
	ctx, name := testCtx(t), lockName()
	c := newClient()
	a := fairlock.New(newClient(), name)
	b := fairlock.New(newClient(), name)
	own := latchkey.WithOwner(ctx)
	for range 10 {
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		done := goLock(func() error { return b.Lock(own) })
		waitQueued(t, c, name, 1)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if err := b.Lock(own); err != nil {
			t.Fatal(err)
		}
		if n, err := b.HoldCount(own); n != 2 || err != nil {
			t.Fatalf("HoldCount after a grant and a re-entry = %d, %v; want 2", n, err)
		}
		for range 2 {
			if err := b.Unlock(own); err != nil {
				t.Fatal(err)
			}
		}
		if ok, _ := b.IsLocked(ctx); ok {
			t.Fatal("still locked after two unlocks")
		}
	}
}

// A waiter that gives up while a grant is on its way gives the lock back:
// whatever the timing, the lock is never left to a waiter whose Lock
// failed, and the next waiter gets it.
func TestGrantGivenUp(t *testing.T) {
	newClient := realServer(t)
	ctx, name := testCtx(t), lockName()
	c := newClient()
	a := fairlock.New(newClient(), name)
	b := fairlock.New(newClient(), name)
	d := fairlock.New(newClient(), name)
	rng := rand.New(rand.NewPCG(3, 4))
	gaveUp := 0
	for range 40 {
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		bctx, cancel := context.WithCancel(ctx)
		bdone := goLock(func() error { return b.Lock(bctx) })
		waitQueued(t, c, name, 1)
		ddone := goLock(func() error { return d.Lock(ctx) })
		waitQueued(t, c, name, 2)
		delay := time.Duration(rng.IntN(400)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			cancel()
		}()
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		r := await(t, bdone, 5*time.Second)
		cancel()
		switch {
		case r.err == nil:
			if err := b.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		case errors.Is(r.err, context.Canceled):
			gaveUp++
		default:
			t.Fatalf("b's Lock = %v", r.err)
		}
		if r := await(t, ddone, 2*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if f := c.HKeys(ctx, name).Val(); len(f) != 1 {
			t.Fatalf("lock hash while d holds = %v, want d alone", f)
		}
		if err := d.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if gaveUp == 0 {
		t.Error("b never gave up: the test did not race cancellation against the grant")
	}
}
