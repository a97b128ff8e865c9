package latchkey_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// The suite's backends are one server (or one cluster) each, and N clients
// of one server cannot make a quorum (every "node" holds the same key), so
// these cases run a redlock over a single node: what they check is each
// node's part (layout, exclusion, renewal, loss). The quorum itself is
// tested in package redlock against 5 independent redis-server masters.
func init() {
	register("redlock/layout", redLayout)
	register("redlock/exclusion-with-rlock", redExclusionWithRLock)
	register("redlock/lost-on-renewal", redLostOnRenewal)
	register("redlock/fixed-lease-validity", redFixedLease)
}

func redOne(c redis.UniversalClient, name string, opts ...redlock.Option) *redlock.Mutex {
	return redlock.New([]redis.UniversalClient{c}, name, opts...)
}

// The node holds a Redisson RLock hash; Unlock deletes it and publishes "0".
func redLayout(t *testing.T, e *env) {
	ctx := multiCtx(t)
	c := e.Client()
	m := redOne(c, e.Name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	fields, err := c.HGetAll(ctx, e.Name).Result()
	if err != nil || len(fields) != 1 {
		t.Fatalf("lock hash = %v, %v; want one field", fields, err)
	}
	for f, n := range fields {
		if uuid, _, ok := strings.Cut(f, ":"); !ok || len(uuid) != 36 || n != "1" {
			t.Fatalf("field %q = %q, want <uuid>:<n> = 1", f, n)
		}
	}
	if ttl := c.PTTL(ctx, e.Name).Val(); ttl <= 25*time.Second || ttl > 30*time.Second {
		t.Fatalf("PTTL = %v, want the 30s watchdog lease", ttl)
	}
	channel := keys.LockChannel(e.Name)
	var sub *redis.PubSub
	if cc, ok := e.observer().(*redis.ClusterClient); ok {
		sub = cc.SSubscribe(ctx, channel)
	} else {
		sub = e.observer().Subscribe(ctx, channel)
	}
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
	if n := c.Exists(ctx, e.Name).Val(); n != 0 {
		t.Fatal("lock key left after Unlock")
	}
}

// A redlock node's lock is a Redisson RLock: a mutex of the same name and a
// redlock exclude each other.
func redExclusionWithRLock(t *testing.T, e *env) {
	ctx := multiCtx(t)
	rl := redOne(e.Client(), e.Name)
	mu := mutex.New(e.Client(), e.Name)
	if err := mu.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := rl.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("redlock TryLock while a mutex holds the name = %v, %v; want false, nil", ok, err)
	}
	if err := mu.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := rl.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("redlock TryLock after the mutex's Unlock = %v, %v; want true, nil", ok, err)
	}
	if ok, err := mu.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("mutex TryLock while the redlock holds the name = %v, %v; want false, nil", ok, err)
	}
	if err := rl.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A renewal that finds the hold gone on the node ends it: Done closes with
// ErrLost.
func redLostOnRenewal(t *testing.T, e *env) {
	ctx := multiCtx(t)
	c := e.Client()
	m := redOne(c, e.Name, redlock.WithWatchdogTimeout(600*time.Millisecond), redlock.WithNodeTimeout(200*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	c.Del(ctx, e.Name)
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done still open 5s after the key was deleted (renewals every 200ms)")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Unlock after loss = %v, want ErrNotHeld", err)
	}
}

// A fixed lease ends the hold locally before the key expires on the node
// (validity = lease - elapsed - drift); then the lock is free again. The
// deadline is checked against the key's expiry as the node reports it, so
// that a loaded machine running the expiry timer late cannot fail the test:
// the node's key expires no later than t1 + PTTL + 1ms (PTTL rounds down),
// t1 taken after the answer, however late the PTTL was sent or answered.
func redFixedLease(t *testing.T, e *env) {
	ctx := multiCtx(t)
	lease := time.Second // and a node timeout a loaded machine can meet
	c := e.Client()
	m := redOne(c, e.Name, redlock.WithLease(lease), redlock.WithNodeTimeout(lease/2))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := m.Deadline()
	pttl, err := c.PTTL(ctx, e.Name).Result()
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	if expiry := t1.Add(pttl + time.Millisecond); !deadline.Before(expiry) {
		t.Errorf("validity deadline %v after the key's expiry on the node, at the latest %v",
			deadline.Sub(t1), pttl+time.Millisecond)
	}
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("Done still open 5s after a %v lease", lease)
	}
	if early := time.Until(deadline); early > 0 {
		t.Errorf("Done closed %v before the validity deadline", early)
	}
	if !m.Deadline().IsZero() {
		t.Errorf("Deadline = %v after the hold ended, want zero", m.Deadline())
	}
	if !errors.Is(m.Err(), latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", m.Err())
	}
	e.Advance(lease) // the key expires on the node, if the loss did not remove it
	other := redOne(e.Client(), e.Name)
	if ok, err := other.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock after the lease = %v, %v; want true, nil", ok, err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
