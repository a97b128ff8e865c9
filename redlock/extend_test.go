package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/redlock"
)

// Extend moves the validity on by a quorum of nodes, keeps a lost quorum's
// rule, and is refused on a watchdog hold.
func TestMutex_extend(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx := context.Background()
	name := lockName(t)
	const lease = 500 * time.Millisecond
	m := redlock.New(cs, name, redlock.WithLease(lease), redlock.WithNodeTimeout(lease/2))
	if err := m.Extend(ctx, time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Extend before Lock = %v, want ErrNotHeld", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return held(t, cs, name) == 3 }) {
		t.Fatalf("the lock is on %d of 3 nodes", held(t, cs, name))
	}
	sent := time.Now()
	if err := m.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("Extend = %v", err)
	}
	if d := m.Deadline().Sub(sent); d > 10*time.Second || d < 9*time.Second {
		t.Errorf("Deadline %v after Extend(10s)'s send", d)
	}
	for i, mr := range ms {
		if ttl := mr.TTL(name); ttl < 9*time.Second {
			t.Errorf("node %d: TTL %v after Extend(10s)", i, ttl)
		}
	}
	time.Sleep(2 * lease)
	if isClosed(m.Done()) {
		t.Fatalf("hold ended past its lease although extended: %v", m.Err())
	}

	ms[1].Del(name) // a quorum still holds
	if err := m.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("Extend with 2 of 3 nodes holding = %v", err)
	}
	ms[2].Del(name) // no quorum left
	if err := m.Extend(ctx, 10*time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Extend with 1 of 3 nodes holding = %v, want ErrNotHeld", err)
	}
	if !isClosed(m.Done()) || !errors.Is(m.Err(), latchkey.ErrLost) {
		t.Fatalf("after Extend found no quorum: Done closed %v, Err %v; want closed, ErrLost", isClosed(m.Done()), m.Err())
	}
	if !m.Deadline().IsZero() {
		t.Errorf("Deadline of a lost hold = %v, want zero", m.Deadline())
	}
	if !eventually(5*time.Second, func() bool { return held(t, cs, name) == 0 }) {
		t.Errorf("a hold lost on Extend left its key on %d nodes", held(t, cs, name))
	}

	watched := redlock.New(cs, lockName(t)+":watched")
	if err := watched.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer watched.Unlock(ctx)
	if err := watched.Extend(ctx, time.Hour); err == nil || errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Extend of a watchdog hold = %v, want an error saying the watchdog keeps it", err)
	}
}
