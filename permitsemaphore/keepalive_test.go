package permitsemaphore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// closedWithin reports whether c is closed, or closes within d.
func closedWithin(c <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return true
	default:
	}
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

// A permit kept alive outlives its lease many times over on a real server,
// renewed by the client's watchdog; deleting it from the server closes
// Done, with Err and the permit's Context's cause matching ErrLost, and a
// Release then matches ErrNotHeld.
func TestPermit_KeepAlive(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	c, raw := client(t, s), s.Client(t)
	sem := permitsemaphore.New(c, name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const lease = 200 * time.Millisecond
	p, err := sem.Acquire(ctx, permitsemaphore.Lease(lease))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.KeepAlive(); err != nil {
		t.Fatal(err)
	}
	if err := p.KeepAlive(); err != nil {
		t.Errorf("KeepAlive again = %v, want nil", err)
	}
	work := p.Context(ctx)
	if closedWithin(p.Done(), 5*lease) {
		t.Fatalf("Done closed while kept alive: %v", p.Err())
	}
	if d, err := sem.LeaseTime(ctx, p.ID()); d <= 0 || d > lease || err != nil {
		t.Errorf("LeaseTime after 5 leases = %v, %v; want up to %v", d, err, lease)
	}
	if _, ok, err := sem.TryAcquire(ctx, 0, permitsemaphore.Forever); ok || err != nil {
		t.Errorf("TryAcquire while the permit is kept = %v, %v; want false", ok, err)
	}
	if err := p.Extend(ctx, permitsemaphore.Lease(time.Minute)); err == nil {
		t.Error("Extend of a permit kept alive succeeded")
	}

	id, _ := hex.DecodeString(p.ID()) // Redisson stores the 16 raw bytes
	if err := raw.ZRem(ctx, "{"+name+"}:timeout", id).Err(); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(p.Done(), 2*time.Second) {
		t.Fatal("Done did not close when the permit was deleted from the server")
	}
	if err := p.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
	if err := context.Cause(work); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("the permit's context's cause = %v, want ErrLost", err)
	}
	if err := p.Release(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Release after loss = %v, want ErrNotHeld", err)
	}
	if err := p.KeepAlive(); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("KeepAlive after loss = %v, want ErrNotHeld", err)
	}
	if n := rt.Of(c).Watchdog().Len(); n != 0 {
		t.Errorf("the watchdog renews %d holds after the loss", n)
	}
}

// Release of a permit kept alive stops its renewals and closes Done with
// a nil Err, through the Permit or by its id through the handle; Delete
// through the handle ends the permits it keeps alive at once, and those
// kept through another handle at their next renewal.
func TestPermit_KeepAlive_ends(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	c := client(t, s)
	sem, other := permitsemaphore.New(c, name), permitsemaphore.New(client(t, s), name)
	if err := sem.SetPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	kept := func(sem *permitsemaphore.Semaphore) *permitsemaphore.Permit {
		t.Helper()
		p, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Second))
		if err == nil {
			err = p.KeepAlive()
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := kept(sem), kept(sem)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, b.ID()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*permitsemaphore.Permit{a, b} {
		if !closedWithin(p.Done(), 0) || p.Err() != nil {
			t.Errorf("after Release: Done closed %v, Err %v; want closed, nil", closedWithin(p.Done(), 0), p.Err())
		}
	}
	if n := rt.Of(c).Watchdog().Len(); n != 0 {
		t.Errorf("the watchdog renews %d holds after the releases", n)
	}

	mine, theirs := kept(sem), kept(other)
	if ok, err := sem.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if !closedWithin(mine.Done(), 0) {
		t.Fatal("Delete did not end the permit kept through its handle")
	}
	if err := mine.Err(); !errors.Is(err, latchkey.ErrLost) || !errors.Is(err, latchkey.ErrDeleted) {
		t.Errorf("Err = %v, want ErrLost and ErrDeleted", err)
	}
	if !closedWithin(theirs.Done(), 2*time.Second) { // a renewal every third of a second
		t.Fatal("the permit kept through another handle was not found lost")
	}
	if err := theirs.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
}

// KeepAlive refuses what it cannot keep: a permanent permit, a nil one, a
// released one. A permit not kept alive ends with its Release all the same.
func TestPermit_KeepAlive_refused(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	forever, err := sem.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	if err := forever.KeepAlive(); !errors.Is(err, latchkey.ErrInvalidLease) {
		t.Errorf("KeepAlive of a permanent permit = %v, want ErrInvalidLease", err)
	}
	var none *permitsemaphore.Permit
	if err := none.KeepAlive(); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("KeepAlive of a nil permit = %v, want ErrNotHeld", err)
	}
	if !closedWithin(none.Done(), 0) || !errors.Is(none.Err(), latchkey.ErrNotHeld) {
		t.Error("a nil permit's Done is open, or its Err does not match ErrNotHeld")
	}
	if closedWithin(forever.Done(), 0) {
		t.Error("Done of a held permit is closed")
	}
	if err := forever.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(forever.Done(), 0) || forever.Err() != nil {
		t.Errorf("after Release: Err %v, Done closed %v", forever.Err(), closedWithin(forever.Done(), 0))
	}
	if err := forever.KeepAlive(); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("KeepAlive of a released permit = %v, want ErrNotHeld", err)
	}
}

// Many holders keep short-leased permits alive for several leases at once,
// from several clients, each batching its renewals: no permit is lost, no
// more than the permits are held at once, and every release succeeds.
func TestPermit_KeepAlive_many(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := semName(t)
	const permits, holders, rounds, lease = 6, 12, 3, 150 * time.Millisecond
	if err := permitsemaphore.New(client(t, s), name).SetPermits(ctx, permits); err != nil {
		t.Fatal(err)
	}
	clients := make([]*redis.Client, 3)
	for i := range clients {
		clients[i] = client(t, s)
	}
	var inside, most atomic.Int64
	errs := make(chan error, holders*rounds)
	var wg sync.WaitGroup
	for i := range holders {
		sem := permitsemaphore.New(clients[i%len(clients)], name)
		wg.Go(func() {
			for range rounds {
				errs <- hold(ctx, sem, lease, &inside, &most)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m > permits {
		t.Errorf("%d holders at once, with %d permits", m, permits)
	}
	if n, err := permitsemaphore.New(client(t, s), name).AvailablePermits(ctx); n != permits || err != nil {
		t.Errorf("AvailablePermits at the end = %d, %v; want %d", n, err, permits)
	}
}

// hold acquires a permit with lease, keeps it alive for two to five
// leases, checking that it stays held, and releases it.
func hold(ctx context.Context, sem *permitsemaphore.Semaphore, lease time.Duration, inside, most *atomic.Int64) error {
	p, err := sem.Acquire(ctx, permitsemaphore.Lease(lease))
	if err != nil {
		return err
	}
	if err := p.KeepAlive(); err != nil {
		return err
	}
	n := inside.Add(1)
	for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
	}
	lost := closedWithin(p.Done(), time.Duration(2+rand.IntN(4))*lease)
	inside.Add(-1)
	if lost {
		return p.Err()
	}
	return p.Release(ctx)
}
