package permitsemaphore_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// allocated returns the bytes the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// AcquireN makes nothing in proportion to n before the server granted n
// permits: n above what the semaphore has in all is refused by the server
// having been sent a number and one id, n above MaxAcquire at the call,
// and a waiter's queue entry is as short for many permits as for one.
// Before, AcquireN built its n permits and their ids first: 1,000,000 took
// 455MB, and math.MaxInt32 ended the process.
func TestSemaphore_acquireNAllocatesWhatTheServerGrants(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	c := client(t, s)
	name := semName(t)
	sem := permitsemaphore.New(c, name)
	if err := sem.SetPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	const bound = 1 << 20 // a call's own needs, far below the 16MB of MaxAcquire ids
	for _, n := range []int{permitsemaphore.MaxAcquire, math.MaxInt32} {
		var err error
		bytes := allocated(func() { _, err = sem.AcquireN(ctx, n, permitsemaphore.Forever) })
		if !errors.Is(err, latchkey.ErrInvalidPermits) {
			t.Fatalf("AcquireN(%d) of 4 permits = %v, want ErrInvalidPermits", n, err)
		}
		if bytes > bound {
			t.Fatalf("AcquireN(%d) of 4 permits allocated %d bytes before it was refused", n, bytes)
		}
	}

	// Waiting on a semaphore never set, which may be set any time.
	unset := permitsemaphore.New(c, semName(t))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	var bytes uint64
	go func() {
		var err error
		b := allocated(func() { _, err = unset.AcquireN(wctx, permitsemaphore.MaxAcquire, permitsemaphore.Forever) })
		bytes = b
		done <- err
	}()
	queue := "latchkey_semaphore_queue:{" + unset.Name() + "}"
	deadline := time.Now().Add(10 * time.Second)
	var entries []string
	for len(entries) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		entries = c.LRange(ctx, queue, 0, -1).Val()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("AcquireN cancelled = %v", err)
	}
	if len(entries) != 1 || len(entries[0]) > 100 {
		t.Errorf("queue entries of a waiter for %d permits: %d, the first %d bytes long; want one, short", permitsemaphore.MaxAcquire, len(entries), len(entries[0]))
	}
	if bytes > bound {
		t.Errorf("a waiter for %d permits allocated %d bytes", permitsemaphore.MaxAcquire, bytes)
	}

	// Granted, they are all there, each its own.
	if err := sem.AddPermits(ctx, 5000-4); err != nil {
		t.Fatal(err)
	}
	ps, err := sem.AcquireN(ctx, 5000, permitsemaphore.Forever)
	if err != nil || len(ps) != 5000 {
		t.Fatalf("AcquireN(5000) = %d permits, %v", len(ps), err)
	}
	ids := make([]string, len(ps))
	seen := make(map[string]bool)
	for i, p := range ps {
		ids[i], seen[p.ID()] = p.ID(), true
	}
	if n, err := sem.AcquiredPermits(ctx); n != 5000 || len(seen) != 5000 || err != nil {
		t.Errorf("AcquiredPermits = %d, %v, with %d distinct ids; want 5000", n, err, len(seen))
	}
	if err := sem.ReleaseAll(ctx, ids...); err != nil {
		t.Errorf("ReleaseAll of the 5000: %v", err)
	}
}
