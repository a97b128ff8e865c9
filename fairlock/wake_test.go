package fairlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The tests here give waiters a 30s liveness timeout, so that their
// heartbeat is 10s: a waiter that gets the lock within a few seconds was woken by a
// message or by its holder's TTL, not by the heartbeat.
const longWait = 30 * time.Second

// TestUnlockOfMissingLockWakesHead: an owner whose hold is gone gets
// ErrNotHeld from Unlock, and the first waiter is still woken (Redisson).
func TestUnlockOfMissingLockWakesHead(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		const java = "java-uuid:7"
		c.HSet(ctx, name, java, 1) // held, with no TTL, by someone outside
		m := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
		done := goLock(func() error { return m.Lock(ctx) })
		waitQueued(t, c, name, 1)
		waitSubscribed(t, c, name, 0)
		c.Del(ctx, name) // its hold vanishes without a message
		time.Sleep(20 * time.Millisecond)
		if !pending(done) {
			t.Fatal("the waiter took the lock without being woken")
		}
		err := m.Unlock(latchkey.WithOwnerID(ctx, java))
		if !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("Unlock of a vanished hold = %v, want ErrNotHeld", err)
		}
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
	})
}

// TestCancelledHeadWakesNext: a first waiter that gives up wakes the next.
func TestCancelledHeadWakesNext(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		c.HSet(ctx, name, "java-uuid:7", 1)
		first := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
		next := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
		fctx, cancel := context.WithCancel(ctx)
		fdone := goLock(func() error { return first.Lock(fctx) })
		waitQueued(t, c, name, 1)
		ndone := goLock(func() error { return next.Lock(ctx) })
		waitQueued(t, c, name, 2)
		waitSubscribed(t, c, name, 0)
		waitSubscribed(t, c, name, 1)
		c.Del(ctx, name)
		time.Sleep(20 * time.Millisecond)
		cancel()
		if r := await(t, fdone, 5*time.Second); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled first waiter = %v", r.err)
		}
		if r := await(t, ndone, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("queue %d, deadlines %d left", n, z)
		}
	})
}

// TestStaleHeadSkipped: a waiter that stopped renewing its place (crashed)
// is skipped as soon as its deadline passes, and not before.
func TestStaleHeadSkipped(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		deadline := time.Now().Add(300 * time.Millisecond)
		addWaiter(t, c, name, "dead-uuid:1", deadline)
		m := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now.UnixMilli() < deadline.UnixMilli() {
			t.Fatalf("skipped a waiter %v before its deadline", deadline.Sub(now))
		} else if late := now.Sub(deadline); late > 3*time.Second {
			t.Fatalf("skipped a dead waiter %v after its deadline", late)
		}
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("queue %d, deadlines %d left", n, z)
		}
	})
}

// TestLiveWaiterKeepsPlace: waiters that wait longer than the liveness
// timeout keep their places, because each renews its heartbeat; their
// Redisson deadlines stay as they were set on arrival. (The timeout leaves
// a heartbeat two thirds of it to arrive: a shorter one than this test's
// takes a live waiter on a loaded machine, whose timers run late, for a
// dead one, as it must.)
func TestLiveWaiterKeepsPlace(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		const wt = time.Second
		holder := fairlock.New(c, name)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		a := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(wt))
		b := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(wt))
		own := latchkey.WithOwner(ctx)
		adone := goLock(func() error { return a.Lock(own) })
		waitQueued(t, c, name, 1)
		id := latchkey.OwnerID(own)
		deadline := c.ZScore(ctx, timeoutKey(name), id).Val()
		beat, _ := heartbeat(c, name, id)
		bdone := goLock(func() error { return b.Lock(ctx) })
		waitQueued(t, c, name, 2)
		time.Sleep(2 * wt)
		if head, _ := c.LIndex(ctx, queueKey(name), 0).Result(); head != id {
			t.Fatalf("after %v the head is %q, want the first waiter", 2*wt, head)
		}
		if now, _ := heartbeat(c, name, id); now <= beat {
			t.Fatalf("heartbeat not renewed: %v then %v", beat, now)
		}
		if now := c.ZScore(ctx, timeoutKey(name), id).Val(); now != deadline {
			t.Fatalf("Redisson deadline changed from %v to %v", deadline, now)
		}
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if r := await(t, adone, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if !pending(bdone) {
			t.Fatal("the second waiter got the lock while the first holds it")
		}
		if err := a.Unlock(own); err != nil {
			t.Fatal(err)
		}
		if r := await(t, bdone, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
	})
}

// TestNextLearnsNewHolderExpiry: a waiter that takes the lock with a lease
// shorter than the heartbeat wakes the next one, so when it dies with the
// lock, the next one takes it when that lease runs out rather than at its
// heartbeat.
func TestNextLearnsNewHolderExpiry(t *testing.T) {
	newClient := realServer(t)
	ctx, c, name := testCtx(t), newClient(), lockName()
	const lease = 300 * time.Millisecond
	opts := []fairlock.Option{fairlock.WithLease(lease), fairlock.WithLivenessTimeout(longWait)}
	if err := fairlock.New(c, name, opts...).Lock(ctx); err != nil { // never unlocked
		t.Fatal(err)
	}
	first := fairlock.New(newClient(), name, opts...)
	next := fairlock.New(newClient(), name, opts...)
	fdone := goLock(func() error { return first.Lock(ctx) }) // never unlocked
	waitQueued(t, c, name, 1)
	start := time.Now()
	ndone := goLock(func() error { return next.Lock(ctx) })
	if r := await(t, fdone, 5*time.Second); r.err != nil {
		t.Fatal(r.err)
	}
	r := await(t, ndone, 10*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("two leases of %v ran out; the third waiter got the lock after %v", lease, r.at.Sub(start).Round(time.Millisecond))
	if d := r.at.Sub(start); d > 3*time.Second {
		t.Fatalf("the next waiter got the lock after %v, want about %v", d, 2*lease)
	}
}

// TestNoBusyPolling: waiters behind a first waiter that does not take the
// free lock sleep instead of polling Redis.
func TestNoBusyPolling(t *testing.T) {
	srv := redistest.StartServer(t)
	newClient := makerFor(t, srv.Addr())
	ctx, c, name := testCtx(t), newClient(), lockName()
	// A live Redisson waiter, first in line, slow to take the free lock.
	addWaiter(t, c, name, "java-uuid:1", time.Now().Add(time.Minute))
	const waiters, wt = 4, 600 * time.Millisecond // heartbeat 200ms
	cctx, cancel := context.WithCancel(ctx)
	var dones []<-chan result
	for i := range waiters {
		m := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(wt))
		dones = append(dones, goLock(func() error { return m.Lock(cctx) }))
		waitQueued(t, c, name, int64(i+2))
	}
	c.ConfigResetStat(ctx)
	const period = time.Second
	time.Sleep(period)
	calls := scriptCalls(t, c)
	cancel()
	for _, d := range dones {
		if r := await(t, d, 5*time.Second); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("waiter = %v", r.err)
		}
	}
	flight.Settle() // their clean-ups run off the callers' paths
	// Each waiter tries once per heartbeat: about 5 times each in 1s.
	t.Logf("%d waiters behind a slow first waiter ran %d scripts in %v", waiters, calls, period)
	if limit := int64(waiters * 10); calls > limit {
		t.Fatalf("%d script calls in %v, want at most %d", calls, period, limit)
	}
	if n, _ := queueState(t, c, name); n != 1 {
		t.Fatalf("queue holds %d after the waiters left, want the Redisson waiter only", n)
	}
}

// scriptCalls returns how many EVAL and EVALSHA calls the server ran.
func scriptCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for line := range strings.Lines(info) {
		if !strings.HasPrefix(line, "cmdstat_eval") {
			continue
		}
		_, rest, _ := strings.Cut(line, "calls=")
		v, _, _ := strings.Cut(rest, ",")
		k, _ := strconv.ParseInt(v, 10, 64)
		n += k
	}
	return n
}
