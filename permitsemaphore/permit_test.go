package permitsemaphore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// Releasing, extending or reading the lease of a permit that is not held
// (never acquired, malformed id, released, expired, nil) is ErrNotHeld, and
// changes nothing.
func TestSemaphore_Release_notHeld(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	released, err := sem.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}
	expired, err := sem.Acquire(ctx, permitsemaphore.Lease(30*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	held, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // leases end by the client's clock

	for _, id := range []string{"0123456789abcdef0123456789abcdef", "1234", "", "not hex at all!!not hex at all!!", released.ID(), expired.ID()} {
		if err := sem.Release(ctx, id); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("Release(%q) = %v, want ErrNotHeld", id, err)
		}
		if ok, err := sem.UpdateLeaseTime(ctx, id, permitsemaphore.Lease(time.Minute)); ok || err != nil {
			t.Errorf("UpdateLeaseTime(%q) = %v, %v; want false, nil", id, ok, err)
		}
		if _, err := sem.LeaseTime(ctx, id); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("LeaseTime(%q) = %v, want ErrNotHeld", id, err)
		}
	}
	var none *permitsemaphore.Permit
	if err := none.Release(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("nil Permit Release = %v, want ErrNotHeld", err)
	}
	if err := none.Extend(ctx, permitsemaphore.Lease(time.Second)); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("nil Permit Extend = %v, want ErrNotHeld", err)
	}
	if err := expired.Extend(ctx, permitsemaphore.Lease(time.Minute)); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("expired Permit Extend = %v, want ErrNotHeld", err)
	}
	if av, _ := sem.AvailablePermits(ctx); av != 2 {
		t.Errorf("AvailablePermits = %d, want 2 (the expired permit back, one held)", av)
	}
	if err := sem.Release(ctx, held.ID()); err != nil {
		t.Errorf("Release(held) = %v", err)
	}
}

// UpdateLeaseTime moves the lease end of exactly the permit named.
func TestSemaphore_UpdateLeaseTime(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem := permitsemaphore.New(client(t, s), name)
	raw := s.Client(t)
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ps, err := sem.AcquireN(ctx, 2, permitsemaphore.Lease(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	score := func(p *permitsemaphore.Permit) float64 {
		b, _ := hex.DecodeString(p.ID())
		v, err := raw.ZScore(ctx, "{"+name+"}:timeout", string(b)).Result()
		if errors.Is(err, redis.Nil) {
			return -1
		}
		return v
	}
	before := score(ps[1])
	if ok, err := sem.UpdateLeaseTime(ctx, ps[0].ID(), permitsemaphore.Lease(10*time.Second)); !ok || err != nil {
		t.Fatalf("UpdateLeaseTime = %v, %v", ok, err)
	}
	if d, err := sem.LeaseTime(ctx, ps[0].ID()); err != nil || d < 9*time.Second || d > 10*time.Second {
		t.Fatalf("LeaseTime after update = %v, %v; want about 10s", d, err)
	}
	if after := score(ps[1]); after != before {
		t.Fatalf("the other permit's lease end moved from %v to %v", before, after)
	}
	time.Sleep(400 * time.Millisecond)
	if err := sem.Release(ctx, ps[1].ID()); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("Release of the permit not updated, after its lease = %v, want ErrNotHeld", err)
	}
	if n, _ := sem.AcquiredPermits(ctx); n != 1 {
		t.Fatalf("AcquiredPermits = %d, want the updated permit only", n)
	}
	if err := ps[0].Extend(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if d, err := sem.LeaseTime(ctx, ps[0].ID()); d != -1 || err != nil {
		t.Fatalf("LeaseTime of a permanent permit = %v, %v; want -1", d, err)
	}
	if score(ps[0]) != permanentScore {
		t.Fatalf("permanent permit's score = %v", score(ps[0]))
	}
	if err := ps[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
}
