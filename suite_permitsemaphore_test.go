package latchkey_test

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// Permit-expirable semaphore cases (Redisson's
// RedissonPermitExpirableSemaphoreTest). Leases end by the clients' clocks,
// so these cases sleep rather than Advance the server.

func init() {
	register("permitsemaphore/wire", func(t *testing.T, e *env) {
		ctx := context.Background()
		c := e.Client()
		sem := permitsemaphore.New(c, e.Name)
		if ok, err := sem.TrySetPermits(ctx, 3); !ok || err != nil {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		ps := semSubscribe(t, e.observer(), "redisson_sc:{"+e.Name+"}")
		leased, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		semOK(t, err)
		forever, err := sem.Acquire(ctx, 0)
		semOK(t, err)
		if v := c.Get(ctx, e.Name).Val(); v != "1" {
			t.Fatalf("GET %s = %q, want \"1\"", e.Name, v)
		}
		zs, err := c.ZRangeWithScores(ctx, "{"+e.Name+"}:timeout", 0, -1).Result()
		if err != nil || len(zs) != 2 {
			t.Fatalf("timeout zset = %v, %v", zs, err)
		}
		// Members are the ids' 16 raw bytes, ordered by lease end.
		if id := hex.EncodeToString([]byte(zs[0].Member.(string))); id != leased.ID() || zs[0].Score > float64(time.Now().Add(time.Minute).UnixMilli()) {
			t.Errorf("first member %s score %v, want the leased permit %s", id, zs[0].Score, leased.ID())
		}
		if id := hex.EncodeToString([]byte(zs[1].Member.(string))); id != forever.ID() || zs[1].Score != 922337203685477 {
			t.Errorf("second member %s score %v, want the permanent permit %s", id, zs[1].Score, forever.ID())
		}
		semOK(t, leased.Release(ctx))
		semMessage(t, ps, "2") // the new available count
		semOK(t, sem.AddPermits(ctx, 2))
		semMessage(t, ps, "2") // the number added, as Redisson
	})

	register("permitsemaphore/release", func(t *testing.T, e *env) {
		ctx := context.Background()
		sem := permitsemaphore.New(e.Client(), e.Name)
		semOK(t, sem.SetPermits(ctx, 2))
		short, err := sem.Acquire(ctx, permitsemaphore.Lease(30*time.Millisecond))
		semOK(t, err)
		held, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		semOK(t, err)
		time.Sleep(60 * time.Millisecond)
		other := permitsemaphore.New(e.Client(), e.Name) // ids work across processes
		for _, id := range []string{short.ID(), "00000000000000000000000000000000", "1234"} {
			if err := other.Release(ctx, id); !errors.Is(err, latchkey.ErrNotHeld) {
				t.Errorf("Release(%q) = %v, want ErrNotHeld", id, err)
			}
		}
		if err := other.Release(ctx, held.ID()); err != nil {
			t.Fatalf("Release(held) from another handle = %v", err)
		}
		if err := held.Release(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("second Release = %v, want ErrNotHeld", err)
		}
		pesCounts(t, sem, 2, 0)
	})

	register("permitsemaphore/lease", func(t *testing.T, e *env) {
		ctx := context.Background()
		sem := permitsemaphore.New(e.Client(), e.Name)
		semOK(t, sem.SetPermits(ctx, 3))
		ps, err := sem.AcquireN(ctx, 2, permitsemaphore.Lease(200*time.Millisecond))
		semOK(t, err)
		if ok, err := sem.UpdateLeaseTime(ctx, ps[0].ID(), permitsemaphore.Lease(time.Minute)); !ok || err != nil {
			t.Fatalf("UpdateLeaseTime = %v, %v", ok, err)
		}
		time.Sleep(300 * time.Millisecond)
		pesCounts(t, sem, 2, 1) // only the permit not updated came back
		if d, err := sem.LeaseTime(ctx, ps[0].ID()); err != nil || d < 50*time.Second {
			t.Fatalf("LeaseTime of the updated permit = %v, %v", d, err)
		}
		if err := ps[1].Extend(ctx, permitsemaphore.Lease(time.Minute)); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("Extend of an expired permit = %v, want ErrNotHeld", err)
		}
		semOK(t, ps[0].Release(ctx))
		pesCounts(t, sem, 3, 0)
	})

	register("permitsemaphore/expiry", func(t *testing.T, e *env) {
		// A holder that vanishes: a blocked waiter takes its permit when
		// the lease ends, though nobody releases or publishes anything.
		ctx := context.Background()
		c := e.Client()
		semOK(t, permitsemaphore.New(c, e.Name).SetPermits(ctx, 1))
		const lease = 300 * time.Millisecond
		_, err := permitsemaphore.New(e.Client(), e.Name).Acquire(ctx, permitsemaphore.Lease(lease))
		semOK(t, err)
		leaseEnd := time.Now().Add(lease)
		ps := semSubscribe(t, e.observer(), "redisson_sc:{"+e.Name+"}")
		h := semHub(t, c)
		sem := permitsemaphore.New(c, e.Name, permitsemaphore.WithHub(h))
		p, ok, err := sem.TryAcquire(ctx, 2*time.Second, 0)
		if !ok || err != nil {
			t.Fatalf("TryAcquire = %v, %v; want the expired permit", ok, err)
		}
		if late := time.Since(leaseEnd); late > time.Second {
			t.Errorf("took the permit %v after its lease ended", late)
		}
		if m, err := ps.ReceiveTimeout(ctx, 50*time.Millisecond); err == nil {
			t.Errorf("message %v published; none was needed", m)
		}
		semOK(t, p.Release(ctx))
	})

	register("permitsemaphore/total", func(t *testing.T, e *env) {
		ctx := context.Background()
		sem := permitsemaphore.New(e.Client(), e.Name)
		semOK(t, sem.SetPermits(ctx, 5))
		a, err := sem.AcquireN(ctx, 2, 0)
		semOK(t, err)
		// The leased permits count as acquired until their lease ends: no
		// sooner than lease after the call was made, and no later than
		// lease after it returned. A look that ends after the earliest end
		// can only be checked for consistency (see pesCountsUntil).
		const lease = 500 * time.Millisecond
		leased := time.Now().Add(lease)
		_, err = sem.AcquireN(ctx, 2, permitsemaphore.Lease(lease))
		semOK(t, err)
		ended := time.Now().Add(lease)
		pesCountsUntil(t, sem, leased, 1, 4)
		semOK(t, sem.SetPermits(ctx, 3)) // fewer than held: available < 0
		pesCountsUntil(t, sem, leased, -1, 4)
		time.Sleep(time.Until(ended) + 50*time.Millisecond)
		pesCounts(t, sem, 1, 2)
		semOK(t, sem.ReleaseAll(ctx, a[0].ID(), a[1].ID()))
		pesCounts(t, sem, 3, 0)
	})
}

// pesCountsUntil is pesCounts for counts that hold until valid: a look
// that ended later (a loaded machine) only checks that the counts add up.
func pesCountsUntil(t *testing.T, sem *permitsemaphore.Semaphore, valid time.Time, available, acquired int64) {
	t.Helper()
	ctx := context.Background()
	av, err1 := sem.AvailablePermits(ctx)
	ac, err2 := sem.AcquiredPermits(ctx)
	tot, err3 := sem.Permits(ctx)
	late := !time.Now().Before(valid)
	if err := errors.Join(err1, err2, err3); err != nil || tot != av+ac || !late && (av != available || ac != acquired) {
		t.Fatalf("available %d, acquired %d, total %d (%v); want %d, %d, %d",
			av, ac, tot, err, available, acquired, available+acquired)
	}
	if late && (av != available || ac != acquired) {
		t.Logf("available %d, acquired %d: the look ended after the lease may have, so not checked", av, ac)
	}
}

// pesCounts checks available and acquired, and that they add up to Permits.
func pesCounts(t *testing.T, sem *permitsemaphore.Semaphore, available, acquired int64) {
	t.Helper()
	ctx := context.Background()
	av, err1 := sem.AvailablePermits(ctx)
	ac, err2 := sem.AcquiredPermits(ctx)
	tot, err3 := sem.Permits(ctx)
	if err := errors.Join(err1, err2, err3); err != nil || av != available || ac != acquired || tot != av+ac {
		t.Fatalf("available %d, acquired %d, total %d (%v); want %d, %d, %d",
			av, ac, tot, err, available, acquired, available+acquired)
	}
}
