package redlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

func TestNew_panics(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	d := redis.NewClient(&redis.Options{Addr: "127.0.0.1:2"})
	defer d.Close()
	two := []redis.UniversalClient{c, d}
	for _, tc := range []struct {
		name string
		new  func()
	}{
		{"no clients", func() { redlock.New(nil, "x") }},
		{"nil client", func() { redlock.New([]redis.UniversalClient{c, nil}, "x") }},
		{"repeated client", func() { redlock.New([]redis.UniversalClient{c, d, c}, "x") }},
		{"zero lease", func() { redlock.New(two, "x", redlock.WithLease(0)) }},
		{"1ns lease", func() { redlock.New(two, "x", redlock.WithLease(time.Nanosecond)) }},
		{"short watchdog", func() { redlock.New(two, "x", redlock.WithWatchdogTimeout(time.Millisecond)) }},
		{"zero node timeout", func() { redlock.New(two, "x", redlock.WithNodeTimeout(0)) }},
		{"node timeout = lease", func() {
			redlock.New(two, "x", redlock.WithLease(time.Second), redlock.WithNodeTimeout(time.Second))
		}},
		{"zero retry delay", func() { redlock.New(two, "x", redlock.WithRetryDelay(0)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "redlock: New: ") {
					t.Fatalf("recovered %v, want a redlock: New: panic", r)
				}
			}()
			tc.new()
		})
	}
}

func TestMutex_redissonLayout(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx := context.Background()
	name := lockName(t)
	m := redlock.New(cs, name)

	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	var owner string
	for i, mr := range ms {
		fields, err := cs[i].HGetAll(ctx, name).Result()
		if err != nil || len(fields) != 1 {
			t.Fatalf("node %d: lock hash = %v, %v; want one field", i, fields, err)
		}
		for f, n := range fields {
			if uuid, seq, ok := strings.Cut(f, ":"); !ok || len(uuid) != 36 || seq == "" || n != "1" {
				t.Fatalf("node %d: field %q = %q, want <uuid>:<n> = 1", i, f, n)
			}
			if owner != "" && f != owner {
				t.Fatalf("node %d: owner %q, node 0 has %q: want one owner id on every node", i, f, owner)
			}
			owner = f
		}
		if ttl := mr.TTL(name); ttl < 29*time.Second || ttl > 30*time.Second {
			t.Errorf("node %d: TTL = %v, want the 30s watchdog lease", i, ttl)
		}
		if tok, _ := mr.Get("redisson_lock_token:{" + name + "}"); tok != "1" {
			t.Errorf("node %d: fencing counter = %q, want 1", i, tok)
		}
	}

	sub := cs[1].Subscribe(ctx, "redisson_lock__channel:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "0" {
		t.Fatalf("unlock message = %v, %v; want \"0\"", msg, err)
	}
	if n := held(t, cs, name); n != 0 {
		t.Errorf("lock key left on %d nodes after Unlock", n)
	}
	if !isClosed(m.Done()) || m.Err() != nil {
		t.Errorf("after Unlock: Done closed = %v, Err = %v; want closed, nil", isClosed(m.Done()), m.Err())
	}
}

func TestMutex_TryLock_heldElsewhere(t *testing.T) {
	cs := miniClients(t, minis(t, 3))
	ctx := context.Background()
	name := lockName(t)
	a := redlock.New(cs, name)
	b := redlock.New(cs, name, redlock.WithRetryDelay(20*time.Millisecond))
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ok, err := b.TryLock(ctx, 0)
	if ok || err != nil {
		t.Fatalf("TryLock(0) on a held lock = %v, %v; want false, nil", ok, err)
	}
	start := time.Now()
	ok, err = b.TryLock(ctx, 150*time.Millisecond)
	if ok || err != nil {
		t.Fatalf("TryLock(150ms) on a held lock = %v, %v; want false, nil", ok, err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("TryLock(150ms) returned after %v", d)
	}
	for i, fs := range holders(t, cs, name) {
		if len(fs) != 1 {
			t.Errorf("node %d: owners %v, want only the holder's", i, fs)
		}
	}
	if err := b.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock by the loser = %v, want ErrNotHeld", err)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock(0) after the holder's Unlock = %v, %v; want true, nil", ok, err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Goroutines sharing a handle exclude each other; an owner in ctx
// re-enters, counted locally.
func TestMutex_ownership(t *testing.T) {
	cs := miniClients(t, minis(t, 3))
	ctx := context.Background()
	name := lockName(t)
	m := redlock.New(cs, name)

	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("second plain TryLock on the same handle = %v, %v; want false, nil", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	octx := latchkey.WithOwner(ctx)
	for range 2 {
		if err := m.Lock(octx); err != nil {
			t.Fatal(err)
		}
	}
	if fs := holders(t, cs, name)[0]; len(fs) != 1 || fs[0] != latchkey.OwnerID(octx) {
		t.Fatalf("node 0 owners = %v, want the ctx owner %q", fs, latchkey.OwnerID(octx))
	}
	if err := m.Unlock(octx); err != nil {
		t.Fatal(err)
	}
	if n := held(t, cs, name); n != 3 || isClosed(m.Done()) {
		t.Fatalf("after one of two Unlocks: held on %d nodes, Done closed = %v; want 3, open", n, isClosed(m.Done()))
	}
	if err := m.Unlock(octx); err != nil {
		t.Fatal(err)
	}
	if n := held(t, cs, name); n != 0 {
		t.Fatalf("after the last Unlock: held on %d nodes", n)
	}
	if err := m.Unlock(octx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("third Unlock = %v, want ErrNotHeld", err)
	}
}

// The watchdog renews on every node; when renewals find too few nodes still
// holding the lock, Done closes with ErrLost and a *QuorumError. (The lease
// and node timeout leave a loaded machine, whose timers and replies run
// late, a second to spare.)
func TestMutex_watchdogLosesQuorum(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx := context.Background()
	name := lockName(t)
	const lease = 3 * time.Second
	const period = lease / 3 // renewals
	m := redlock.New(cs, name, redlock.WithWatchdogTimeout(lease), redlock.WithNodeTimeout(time.Second))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// A node slower than the quorum may still be granting: the deletions
	// below count on all three holding.
	if !eventually(5*time.Second, func() bool { return held(t, cs, name) == 3 }) {
		t.Fatalf("the lock is on %d of 3 nodes", held(t, cs, name))
	}
	// miniredis does not expire keys by itself: renewals must keep the
	// TTL at the lease.
	ms[0].FastForward(2 * period)
	time.Sleep(period + period/4)
	if ttl := ms[0].TTL(name); ttl <= period || isClosed(m.Done()) {
		t.Fatalf("after a renewal period: TTL %v, Done closed = %v; want renewed, held", ttl, isClosed(m.Done()))
	}

	ms[1].Del(name) // one node lost: a quorum remains
	time.Sleep(period + period/4)
	if isClosed(m.Done()) {
		t.Fatalf("Done closed with 2 of 3 nodes holding: %v", m.Err())
	}
	ms[2].Del(name) // two lost: no quorum possible
	if !closedWithin(m.Done(), 5*time.Second) {
		t.Fatal("Done still open 5s after the quorum was lost")
	}
	var qe *redlock.QuorumError
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) || !errors.As(err, &qe) || qe.OK != 1 || qe.Quorum != 2 {
		t.Fatalf("Err = %v, want ErrLost with a *QuorumError (1 of 3, 2 needed)", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Unlock after loss = %v, want ErrNotHeld", err)
	}
	if !eventually(5*time.Second, func() bool { return held(t, cs, name) == 0 }) {
		t.Errorf("a lost hold left its key on %d nodes", held(t, cs, name))
	}
}

// A fixed lease is not renewed: the hold ends when its validity (lease
// minus drift, from when the attempt started) runs out. When Done closes
// depends on when a loaded machine runs the timer; the deadline it runs
// at does not.
func TestMutex_WithLease_expires(t *testing.T) {
	cs := miniClients(t, minis(t, 3))
	ctx := context.Background()
	const lease, drift = time.Second, time.Second/100 + 2*time.Millisecond
	m := redlock.New(cs, lockName(t), redlock.WithLease(lease), redlock.WithNodeTimeout(lease/2))
	start := time.Now()
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	deadline := m.Deadline()
	if deadline.Before(start.Add(lease-drift)) || deadline.After(returned.Add(lease-drift)) {
		t.Errorf("validity deadline %v after Lock was called (it returned after %v), want the lease less the drift (%v) after the attempt started",
			deadline.Sub(start), returned.Sub(start), lease-drift)
	}
	if !closedWithin(m.Done(), 5*time.Second) {
		t.Fatalf("Done still open 5s after a %v lease", lease)
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", err)
	}
}

// With WithHub a waiter wakes on the holder's unlock message instead of
// waiting out its (here very long) random retry delay.
func TestMutex_WithHub_wokenByUnlock(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx := context.Background()
	name := lockName(t)
	a := redlock.New(cs, name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	b := redlock.New(cs, name, redlock.WithHub(pubsub.Shared(cs[0])), redlock.WithRetryDelay(time.Hour))
	done := make(chan error, 1)
	go func() { done <- b.Lock(ctx) }()
	channel := "redisson_lock__channel:{" + name + "}"
	for deadline := time.Now().Add(5 * time.Second); ms[0].PubSubNumSub(channel)[channel] == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not subscribe within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("woken %v after the unlock", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the unlock within 10s")
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Lock whose ctx ends while it waits returns ctx's error and leaves
// nothing behind.
func TestMutex_Lock_ctxEnds(t *testing.T) {
	cs := miniClients(t, minis(t, 3))
	name := lockName(t)
	a := redlock.New(cs, name)
	if err := a.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Unlock(context.Background())
	b := redlock.New(cs, name, redlock.WithRetryDelay(10*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := b.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, want context.DeadlineExceeded", err)
	}
	for i, fs := range holders(t, cs, name) {
		if len(fs) != 1 {
			t.Errorf("node %d: owners %v, want only the holder's", i, fs)
		}
	}
}

func TestQuorumError(t *testing.T) {
	cause := errors.New("boom")
	e := &redlock.QuorumError{Op: "lock", Name: "n", Nodes: 5, Quorum: 3, OK: 2, Errs: []*redlock.NodeError{
		{Node: 1, Err: cause}, {Node: 4, Err: redlock.ErrNodeTimeout},
	}}
	var err error = e
	const want = "redlock: lock n: 2 of 5 nodes, 3 needed; node 1: boom; node 4: redlock: no reply within the node timeout"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant       %q", err.Error(), want)
	}
	var ne *redlock.NodeError
	if !errors.Is(err, cause) || !errors.Is(err, redlock.ErrNodeTimeout) || !errors.As(err, &ne) || ne.Node != 1 {
		t.Errorf("errors.Is/As do not see the node errors of %v", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("a node timeout matches context.DeadlineExceeded")
	}
}
