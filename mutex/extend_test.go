package mutex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
)

func TestMutex_extend(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name, mutex.WithLease(300*time.Millisecond))
	if !m.Deadline().IsZero() {
		t.Fatalf("Deadline before any Lock = %v, want zero", m.Deadline())
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(m.Deadline()); d <= 0 || d > 300*time.Millisecond {
		t.Fatalf("Deadline in %v after Lock, want within the 300ms lease", d)
	}
	sent := time.Now()
	if err := m.Extend(ctx, 5*time.Second); err != nil {
		t.Fatalf("Extend = %v", err)
	}
	if got, want := m.Deadline(), sent.Add(5*time.Second); got.After(want) || got.Before(want.Add(-time.Second)) {
		t.Errorf("Deadline after Extend(5s) is %v from its send, want just under 5s", got.Sub(sent))
	}
	if ttl := s.Client(t).PTTL(ctx, name).Val(); ttl < 4*time.Second {
		t.Errorf("PTTL after Extend(5s) = %v", ttl)
	}
	time.Sleep(600 * time.Millisecond) // twice the lease Lock set
	select {
	case <-m.Done():
		t.Fatalf("hold ended past its first lease although extended: %v", m.Err())
	default:
	}
	if ok, err := mutex.New(client(t, s), name).TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("competitor TryLock on the extended lock = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock = %v", err)
	}
	if !m.Deadline().IsZero() {
		t.Errorf("Deadline after Unlock = %v, want zero", m.Deadline())
	}
}

func TestMutex_extendGone(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name, mutex.WithLease(5*time.Second))
	if err := m.Extend(ctx, time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Extend before Lock = %v, want ErrNotHeld", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	s.Client(t).Del(ctx, name)
	if err := m.Extend(ctx, time.Second); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Extend of a deleted lock = %v, want ErrNotHeld", err)
	}
	if n := s.Client(t).Exists(ctx, name).Val(); n != 0 {
		t.Errorf("Extend of a deleted lock created it again")
	}
	select {
	case <-m.Done():
	default:
		t.Fatal("Done still open after Extend found the hold gone")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
}

func TestMutex_extendRefused(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	watched := mutex.New(client(t, s), name)
	if err := watched.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	before := watched.Deadline()
	if err := watched.Extend(ctx, time.Hour); err == nil || errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Extend of a watchdog hold = %v, want an error saying the watchdog keeps it", err)
	}
	if ttl := s.Client(t).PTTL(ctx, name).Val(); ttl > mutex.DefaultWatchdogTimeout {
		t.Errorf("PTTL after a refused Extend = %v", ttl)
	}
	if d := time.Until(before); d <= 0 || d > mutex.DefaultWatchdogTimeout {
		t.Errorf("Deadline of a watchdog hold in %v, want within its %v", d, mutex.DefaultWatchdogTimeout)
	}
	if err := watched.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	m := mutex.New(client(t, s), name, mutex.WithLease(time.Second))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)
	for _, d := range []time.Duration{0, -time.Second, time.Millisecond} {
		if err := m.Extend(ctx, d); !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("Extend(%v) = %v, want ErrInvalidLease", d, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	deadline := m.Deadline()
	if err := m.Extend(cancelled, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Extend with a cancelled ctx = %v, want context.Canceled", err)
	}
	if m.Deadline().After(deadline) {
		t.Errorf("an Extend that failed moved Deadline later: %v -> %v", deadline, m.Deadline())
	}
}

// An owner that re-enters extends every count of its hold, and a grant taken
// from a release is extended before its own take.
func TestMutex_extendOwnerAndGrant(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	const lease = 400 * time.Millisecond
	holder := mutex.New(client(t, s), name, mutex.WithLease(lease))
	owned := latchkey.WithOwner(ctx)
	for range 2 {
		if err := holder.Lock(owned); err != nil {
			t.Fatal(err)
		}
	}
	if err := holder.Extend(owned, 3*time.Second); err != nil {
		t.Fatalf("owner's Extend = %v", err)
	}

	waiter := mutex.New(client(t, s), name, mutex.WithLease(lease))
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	time.Sleep(2 * lease) // the holder outlives its first lease, the waiter queues
	select {
	case err := <-got:
		t.Fatalf("waiter's Lock returned %v while the extended hold was held", err)
	default:
	}
	for range 2 {
		if err := holder.Unlock(owned); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := waiter.Extend(ctx, 3*time.Second); err != nil {
		t.Fatalf("Extend of a granted hold = %v", err)
	}
	time.Sleep(2 * lease)
	if err := waiter.Err(); err != nil {
		t.Fatalf("granted hold ended past the lease although extended: %v", err)
	}
	if ttl := s.Client(t).PTTL(ctx, name).Val(); ttl < time.Second {
		t.Errorf("PTTL of the extended grant = %v", ttl)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
