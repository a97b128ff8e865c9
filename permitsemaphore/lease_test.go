package permitsemaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// A lease that came out negative (a deadline already passed) or too short
// to outlive a round trip is an error at the call, never a permanent
// permit; Forever still is one.
func TestSemaphore_invalidLease(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	held, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	passed := permitsemaphore.Lease(time.Until(time.Now().Add(-time.Second)))
	for _, lease := range []permitsemaphore.Lease{passed, -1, 1, permitsemaphore.Lease(latchkey.MinLease - 1)} {
		calls := map[string]func() error{
			"Acquire":     func() error { _, err := sem.Acquire(ctx, lease); return err },
			"TryAcquire":  func() error { _, _, err := sem.TryAcquire(ctx, time.Second, lease); return err },
			"AcquireN":    func() error { _, err := sem.AcquireN(ctx, 2, lease); return err },
			"TryAcquireN": func() error { _, _, err := sem.TryAcquireN(ctx, 2, 0, lease); return err },
			"Extend":      func() error { return held.Extend(ctx, lease) },
			"UpdateLeaseTime": func() error {
				ok, err := sem.UpdateLeaseTime(ctx, held.ID(), lease)
				if ok {
					t.Errorf("UpdateLeaseTime(%v) reported the permit held", lease)
				}
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, latchkey.ErrInvalidLease) {
				t.Errorf("%s with lease %v = %v, want ErrInvalidLease", name, time.Duration(lease), err)
			}
		}
	}
	if n, err := sem.AvailablePermits(ctx); n != 2 || err != nil {
		t.Errorf("AvailablePermits = %d, %v after refused calls, want 2", n, err)
	}
	if d, err := sem.LeaseTime(ctx, held.ID()); d <= 0 || d > time.Minute || err != nil {
		t.Errorf("LeaseTime = %v, %v after refused extensions, want the minute it had", d, err)
	}
	if _, err := sem.Acquire(ctx, permitsemaphore.Lease(latchkey.MinLease)); err != nil {
		t.Errorf("Acquire with the minimum lease = %v", err)
	}
	forever, err := sem.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := sem.LeaseTime(ctx, forever.ID()); d != -1 || err != nil {
		t.Errorf("LeaseTime of a Forever permit = %v, %v; want -1 (permanent)", d, err)
	}
	if err := held.Extend(ctx, permitsemaphore.Forever); err != nil {
		t.Fatal(err)
	}
	if d, err := sem.LeaseTime(ctx, held.ID()); d != -1 || err != nil {
		t.Errorf("LeaseTime after Extend(Forever) = %v, %v; want -1 (permanent)", d, err)
	}
}
