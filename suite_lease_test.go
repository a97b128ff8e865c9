package latchkey_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/election"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// Leases and TTLs past latchkey.MaxLease: every primitive that takes one
// refuses it (New panics on an option, a call returns an error matching
// ErrInvalidLease), and the longest one accepted reads back as itself,
// where math.MaxInt64 read back as -1ns (a TTL) or -292 years (a lease).

// tooLong is a lease above latchkey.MaxLease.
const tooLong = time.Duration(math.MaxInt64)

func init() {
	register("mutex/max-lease", func(t *testing.T, e *env) {
		c := e.Client()
		wantLeasePanic(t, "WithLease", func() { mutex.New(c, e.Name, mutex.WithLease(tooLong)) })
		wantLeasePanic(t, "WithWatchdogTimeout", func() { mutex.New(c, e.Name, mutex.WithWatchdogTimeout(tooLong)) })
		m := mutex.New(c, e.Name, mutex.WithLease(latchkey.MaxLease))
		lockLongest(t, m.Lock, m.TTL, m.Extend, m.Unlock)
	})
	register("fairlock/max-lease", func(t *testing.T, e *env) {
		c := e.Client()
		wantLeasePanic(t, "WithLease", func() { fairlock.New(c, e.Name, fairlock.WithLease(tooLong)) })
		wantLeasePanic(t, "WithWatchdogTimeout", func() { fairlock.New(c, e.Name, fairlock.WithWatchdogTimeout(tooLong)) })
		m := fairlock.New(c, e.Name, fairlock.WithLease(latchkey.MaxLease))
		lockLongest(t, m.Lock, m.TTL, m.Extend, m.Unlock)
	})
	register("rwlock/max-lease", func(t *testing.T, e *env) {
		c := e.Client()
		wantLeasePanic(t, "WithLease", func() { rwlock.New(c, e.Name, rwlock.WithLease(tooLong)) })
		wantLeasePanic(t, "WithWatchdogTimeout", func() { rwlock.New(c, e.Name, rwlock.WithWatchdogTimeout(tooLong)) })
		rw := rwlock.New(c, e.Name, rwlock.WithLease(latchkey.MaxLease))
		lockLongest(t, rw.Lock, rw.TTL, rw.WriteLock().Extend, rw.Unlock)
	})
	register("redlock/max-lease", func(t *testing.T, e *env) {
		cs := []redis.UniversalClient{e.Client()}
		wantLeasePanic(t, "WithLease", func() { redlock.New(cs, e.Name, redlock.WithLease(tooLong)) })
		wantLeasePanic(t, "WithWatchdogTimeout", func() { redlock.New(cs, e.Name, redlock.WithWatchdogTimeout(tooLong)) })
		m := redlock.New(cs, e.Name, redlock.WithLease(latchkey.MaxLease))
		// RedLock has no TTL: its Deadline tells the lease it believes,
		// less a drift allowance of a hundredth of it and 2ms.
		ttl := func(context.Context) (time.Duration, error) {
			return time.Until(m.Deadline()) + latchkey.MaxLease/100 + 2*time.Millisecond, nil
		}
		lockLongest(t, m.Lock, ttl, m.Extend, m.Unlock)
	})
	register("election/max-lease", func(t *testing.T, e *env) {
		wantLeasePanic(t, "WithLeaseTimeout", func() { election.New(e.Client(), e.Name, election.WithLeaseTimeout(tooLong)) })
	})
	register("countdownlatch/max-lease", func(t *testing.T, e *env) {
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), e.Name)
		if ok, err := l.TrySetCount(ctx, 1); !ok || err != nil {
			t.Fatalf("TrySetCount = %v, %v", ok, err)
		}
		expireLongest(t, l.Expire, l.TTL)
	})
	register("semaphore/max-lease", func(t *testing.T, e *env) {
		ctx := context.Background()
		s := semaphore.New(e.Client(), e.Name)
		if ok, err := s.TrySetPermitsTTL(ctx, 1, tooLong); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("TrySetPermitsTTL(%v) = %v, %v; want ErrInvalidLease", tooLong, ok, err)
		}
		if ok, err := s.TrySetPermitsTTL(ctx, 1, latchkey.MaxLease); !ok || err != nil {
			t.Fatalf("TrySetPermitsTTL(MaxLease) = %v, %v", ok, err)
		}
		wantLongest(t, "TTL after TrySetPermitsTTL", s.TTL)
		expireLongest(t, s.Expire, s.TTL)
	})
	register("permitsemaphore/max-lease", func(t *testing.T, e *env) {
		ctx := context.Background()
		s := permitsemaphore.New(e.Client(), e.Name)
		if ok, err := s.TrySetPermitsTTL(ctx, 2, tooLong); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("TrySetPermitsTTL(%v) = %v, %v; want ErrInvalidLease", tooLong, ok, err)
		}
		if ok, err := s.TrySetPermitsTTL(ctx, 2, latchkey.MaxLease); !ok || err != nil {
			t.Fatalf("TrySetPermitsTTL(MaxLease) = %v, %v", ok, err)
		}
		wantLongest(t, "TTL after TrySetPermitsTTL", s.TTL)
		expireLongest(t, s.Expire, s.TTL)
		if _, err := s.Acquire(ctx, permitsemaphore.Lease(tooLong)); !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("Acquire with lease %v = %v, want ErrInvalidLease", tooLong, err)
		}
		p, err := s.Acquire(ctx, permitsemaphore.Lease(latchkey.MaxLease))
		if err != nil {
			t.Fatalf("Acquire with lease MaxLease: %v", err)
		}
		leaseTime := func(ctx context.Context) (time.Duration, error) { return s.LeaseTime(ctx, p.ID()) }
		wantLongest(t, "LeaseTime", leaseTime)
		if err := p.Extend(ctx, permitsemaphore.Lease(tooLong)); !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("Extend(%v) = %v, want ErrInvalidLease", tooLong, err)
		}
		if ok, err := s.UpdateLeaseTime(ctx, p.ID(), permitsemaphore.Lease(tooLong)); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("UpdateLeaseTime(%v) = %v, %v; want ErrInvalidLease", tooLong, ok, err)
		}
		if err := p.Extend(ctx, permitsemaphore.Lease(latchkey.MaxLease)); err != nil {
			t.Errorf("Extend(MaxLease): %v", err)
		}
		wantLongest(t, "LeaseTime after Extend", leaseTime)
		if err := p.Release(ctx); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
}

// wantLeasePanic checks that f panics, saying that the lease of option is
// invalid.
func wantLeasePanic(t *testing.T, option string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, option) || !strings.Contains(s, latchkey.ErrInvalidLease.Error()) {
			t.Errorf("%s(%v): recovered %v, want a panic saying the lease is invalid", option, tooLong, r)
		}
	}()
	f()
}

// wantLongest checks that ttl reads back about latchkey.MaxLease.
func wantLongest(t *testing.T, what string, ttl func(context.Context) (time.Duration, error)) {
	t.Helper()
	d, err := ttl(context.Background())
	if err != nil || d > latchkey.MaxLease || d < latchkey.MaxLease-time.Minute {
		t.Errorf("%s = %v, %v; want about MaxLease (%v)", what, d, err, latchkey.MaxLease)
	}
}

// lockLongest takes a lock whose lease is latchkey.MaxLease, checks that
// it reads back so, that extend refuses a longer lease and takes the
// longest, and unlocks.
func lockLongest(t *testing.T, lock func(context.Context) error, ttl func(context.Context) (time.Duration, error),
	extend func(context.Context, time.Duration) error, unlock func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	if err := lock(ctx); err != nil {
		t.Fatalf("Lock with lease MaxLease: %v", err)
	}
	wantLongest(t, "TTL", ttl)
	if err := extend(ctx, tooLong); !errors.Is(err, latchkey.ErrInvalidLease) {
		t.Errorf("Extend(%v) = %v, want ErrInvalidLease", tooLong, err)
	}
	if err := extend(ctx, latchkey.MaxLease); err != nil {
		t.Errorf("Extend(MaxLease): %v", err)
	}
	wantLongest(t, "TTL after Extend", ttl)
	if err := unlock(ctx); err != nil {
		t.Errorf("Unlock: %v", err)
	}
}

// expireLongest checks that expire refuses a TTL above latchkey.MaxLease
// and that the longest reads back as itself.
func expireLongest(t *testing.T, expire func(context.Context, time.Duration) (bool, error), ttl func(context.Context) (time.Duration, error)) {
	t.Helper()
	ctx := context.Background()
	if ok, err := expire(ctx, tooLong); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
		t.Errorf("Expire(%v) = %v, %v; want ErrInvalidLease", tooLong, ok, err)
	}
	if ok, err := expire(ctx, latchkey.MaxLease); !ok || err != nil {
		t.Errorf("Expire(MaxLease) = %v, %v", ok, err)
	}
	wantLongest(t, "TTL after Expire", ttl)
}
