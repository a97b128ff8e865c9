package redlock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// 5 nodes: with 2 stopped a quorum of 3 remains; with 3 stopped the
// acquisition fails with a *QuorumError naming each failed node and leaves
// no key on the nodes still up.
func TestMutex_nodesDown(t *testing.T) {
	ss := servers(t, 5)
	cs := clients(t, ss)
	ctx := context.Background()
	name := lockName(t)
	opts := []redlock.Option{redlock.WithNodeTimeout(500 * time.Millisecond)}

	ss[1].Stop()
	ss[3].Stop()
	m := redlock.New(cs, name, opts...)
	if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock with 2 of 5 nodes down = %v, %v; want true, nil", ok, err)
	}
	up := []int{0, 2, 4}
	for _, i := range up {
		if n := cs[i].Exists(ctx, name).Val(); n != 1 {
			t.Errorf("node %d (up) has no lock key", i)
		}
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock with 3 of 5 nodes up = %v", err)
	}

	ss[4].Stop()
	up = []int{0, 2}
	for _, lock := range []func() error{
		func() error { _, err := m.TryLock(ctx, 0); return err },
		func() error { _, err := m.TryLock(ctx, time.Second); return err },
		func() error { return m.Lock(ctx) },
	} {
		err := lock()
		var qe *redlock.QuorumError
		if !errors.As(err, &qe) {
			t.Fatalf("lock with 3 of 5 nodes down = %v, want a *QuorumError", err)
		}
		var failed []int
		for _, ne := range qe.Errs {
			failed = append(failed, ne.Node)
		}
		if qe.OK != 2 || qe.Quorum != 3 || qe.Nodes != 5 || !slices.Equal(failed, []int{1, 3, 4}) {
			t.Fatalf("QuorumError = %+v (failed nodes %v), want 2 of 5, 3 needed, nodes 1 3 4 failed", qe, failed)
		}
		for _, i := range up {
			if n := cs[i].Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("node %d (up) kept the lock key of a failed acquisition", i)
			}
		}
	}
	err := m.Lock(ctx)
	t.Logf("error: %v", err)
	if err == nil {
		t.Error("Lock with 3 of 5 nodes down succeeded")
		_ = m.Unlock(ctx)
	}
}

// An attempt that reaches a quorum only after (nearly) the whole lease has
// gone by is no acquisition: it reports not acquired, and every grant is
// undone, including those of nodes that answered too late.
func TestMutex_validityExhausted(t *testing.T) {
	ss := servers(t, 5)
	cs := clients(t, ss)
	ctx := context.Background()
	name := lockName(t)
	// A node timeout at the lease: the attempt waits for the two stalled
	// nodes until nothing of the 400ms lease is left (drift is 6ms).
	lease := 400 * time.Millisecond
	m := redlock.New(cs, name, redlock.WithLease(lease), redlock.WithNodeTimeout(lease-5*time.Millisecond))
	// Connect and load the scripts first, so that the stalled nodes do
	// receive the request and run it when they resume.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	ss[1].Pause(time.Second)
	ss[3].Pause(time.Second)
	start := time.Now()
	ok, err := m.TryLock(ctx, 0)
	if ok || err != nil {
		t.Fatalf("TryLock = %v, %v; want false, nil (a quorum of 3 granted it, without validity)", ok, err)
	}
	t.Logf("TryLock returned after %v", time.Since(start))
	time.Sleep(time.Until(start.Add(1300 * time.Millisecond))) // the stalled nodes resume and grant
	if !eventually(5*time.Second, func() bool { return held(t, cs, name) == 0 }) {
		t.Fatalf("lock key left on nodes %v after a failed attempt", holders(t, cs, name))
	}
	// The stalled nodes did get the grant when they resumed; it was undone.
	for _, i := range []int{1, 3} {
		if tok := cs[i].Get(ctx, "redisson_lock_token:{"+name+"}").Val(); tok != "2" {
			t.Errorf("node %d: fencing counter = %q, want 2 (its grant ran after the pause)", i, tok)
		}
	}

	ok, err = m.TryLock(ctx, 0)
	if !ok || err != nil {
		t.Fatalf("TryLock with every node responsive = %v, %v; want true, nil", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A node restarted without persistence forgets the holds it was part of:
// the documented unsafety. With 3 nodes and a hold on nodes 0 and 1,
// restarting node 1 lets a second client win nodes 1 and 2 while the first
// still believes it holds the lock. A watchdog-held hold finds out at its
// next renewal; a fixed lease only when its validity runs out.
func TestMutex_restartWithoutPersistence(t *testing.T) {
	ss := servers(t, 3)
	ctx := context.Background()
	setup := func(t *testing.T, opts ...redlock.Option) (a, b *redlock.Mutex) {
		name := lockName(t)
		ss[2].Stop()
		opts = append(opts, redlock.WithNodeTimeout(300*time.Millisecond))
		a = redlock.New(clients(t, ss), name, opts...)
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		ss[2].Restart(t) // node 2 comes back, without a's key
		ss[1].Restart(t) // node 1 loses a's key
		b = redlock.New(clients(t, ss), name, opts...)
		if ok, err := b.TryLock(ctx, 0); !ok || err != nil {
			t.Fatalf("second client's TryLock after the restart = %v, %v; want true (the documented unsafety)", ok, err)
		}
		return a, b
	}

	t.Run("fixed lease", func(t *testing.T) {
		a, b := setup(t, redlock.WithLease(10*time.Second))
		if isClosed(a.Done()) || a.Err() != nil {
			t.Fatalf("first holder: Done closed = %v, Err = %v; want still held", isClosed(a.Done()), a.Err())
		}
		t.Log("both clients hold the lock")
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("first holder's Unlock = %v, want ErrNotHeld (held on 1 of 3 nodes)", err)
		}
		if !errors.Is(a.Err(), latchkey.ErrLost) {
			t.Fatalf("first holder's Err = %v, want ErrLost", a.Err())
		}
	})

	t.Run("watchdog", func(t *testing.T) {
		a, b := setup(t, redlock.WithWatchdogTimeout(3*time.Second))
		if !closedWithin(a.Done(), 5*time.Second) {
			t.Fatal("first holder's Done still open 5s after its quorum was lost (renewals every 1s)")
		}
		var qe *redlock.QuorumError
		if err := a.Err(); !errors.Is(err, latchkey.ErrLost) || !errors.As(err, &qe) {
			t.Fatalf("first holder's Err = %v, want ErrLost with a *QuorumError", err)
		}
		t.Logf("first holder: %v", a.Err())
		if isClosed(b.Done()) {
			t.Fatalf("second holder lost the lock: %v", b.Err())
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// delayAcquire is a go-redis hook that holds back each acquire script by d
// and then sends it whatever its context says: a request that reaches its
// node after the attempt gave up on it and undid it there.
type delayAcquire struct{ d time.Duration }

func (delayAcquire) DialHook(next redis.DialHook) redis.DialHook { return next }

func (delayAcquire) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h delayAcquire) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && strings.HasPrefix(s, "redisson_lock_token:") {
					time.Sleep(h.d)
					return next(context.WithoutCancel(ctx), cmd)
				}
			}
		}
		return next(ctx, cmd)
	}
}

// A grant that lands after its attempt was decided is undone when its reply
// arrives: after a failed attempt, and after the Unlock of a won one.
func TestMutex_lateGrantUndone(t *testing.T) {
	ms := minis(t, 3)
	ctx := context.Background()
	name := lockName(t)
	slow := miniClients(t, ms)
	// Node 2 answers 1s after the node timeout, which leaves the others
	// half a second: enough on a loaded machine.
	slow[2].(*redis.Client).AddHook(delayAcquire{1500 * time.Millisecond})
	m := redlock.New(slow, name, redlock.WithNodeTimeout(500*time.Millisecond))
	granted := func(n string) func() bool {
		return func() bool { v, _ := ms[2].Get("redisson_lock_token:{" + name + "}"); return v == n }
	}

	// Failed attempt: nodes 0 and 1 are held by another owner.
	fast := miniClients(t, ms)
	other := redlock.New(fast[:2], name)
	if err := other.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("TryLock = %v, %v; want false, nil", ok, err)
	}
	if !eventually(5*time.Second, granted("1")) {
		t.Fatal("the held-back grant never reached node 2")
	}
	if !eventually(5*time.Second, func() bool { return !ms[2].Exists(name) }) {
		t.Fatal("the late grant of a failed attempt was left on node 2")
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// Won attempt, unlocked before node 2's grant lands.
	if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v; want true, nil (nodes 0 and 1)", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, granted("2")) {
		t.Fatal("the held-back grant never reached node 2")
	}
	if !eventually(5*time.Second, func() bool { return held(t, fast, name) == 0 }) {
		t.Fatalf("the late grant of an unlocked hold was left: %v", holders(t, fast, name))
	}
}
