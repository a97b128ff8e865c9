package latchkey_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/election"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// The caller's contract for clean-up calls and queries: every one returns
// by its ctx deadline. A clean-up call that returns before its answer
// leaves its release going on in the background, resend-safe: once the
// server answers again, what it frees is free, and counted once.

// byDeadline runs calls side by side, each with a ctx of d, and fails the
// test for each that returned later than pastDeadline after d, or with an
// error that does not match context.DeadlineExceeded.
func byDeadline(t *testing.T, d time.Duration, calls map[string]func(ctx context.Context) error) {
	t.Helper()
	type result struct {
		took time.Duration
		err  error
	}
	var (
		mu      sync.Mutex
		results = map[string]result{}
		wg      sync.WaitGroup
	)
	for name, call := range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			err := call(ctx)
			mu.Lock()
			results[name] = result{time.Since(start), err}
			mu.Unlock()
		})
	}
	wg.Wait()
	for name, r := range results {
		if r.took > d+pastDeadline {
			t.Errorf("%s returned %v after the start, %v past its deadline", name, r.took, r.took-d)
		}
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("%s: error = %v, want one matching context.DeadlineExceeded", name, r.err)
		}
	}
}

// A clean-up call against a stalled server returns by its deadline, and
// its release applies once the server answers again: locks free, permits
// and counts changed exactly once.
func TestContract_cleanupByDeadlineAgainstStalledServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test servers cannot be paused on windows")
	}
	s := redistest.StartServer(t)
	c := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	ctx := context.Background()
	name := t.Name()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	lock := func(l interface{ Lock(context.Context) error }) { must(l.Lock(ctx)) }

	plain := mutex.New(c, name+"-plain")
	lock(plain)
	owned := mutex.New(c, name+"-owned")
	octx := latchkey.WithOwner(ctx)
	must(owned.Lock(octx))
	must(owned.Lock(octx)) // two holds: the release takes one
	fair := fairlock.New(c, name+"-fair")
	lock(fair)
	rw := rwlock.New(c, name+"-rw")
	lock(rw)
	rd := rwlock.New(c, name+"-rd")
	must(rd.RLock(ctx))
	forced := mutex.New(c, name+"-forced")
	lock(forced)
	sem := semaphore.New(c, name+"-sem")
	_, err := sem.TrySetPermits(ctx, 2)
	must(err)
	must(sem.Acquire(ctx, 1))
	ps := permitsemaphore.New(c, name+"-ps")
	_, err = ps.TrySetPermits(ctx, 3)
	must(err)
	p1, err := ps.Acquire(ctx, permitsemaphore.Forever)
	must(err)
	p2, err := ps.Acquire(ctx, permitsemaphore.Forever)
	must(err)
	p3, err := ps.Acquire(ctx, permitsemaphore.Forever)
	must(err)
	latch := countdownlatch.New(c, name+"-latch")
	_, err = latch.TrySetCount(ctx, 2)
	must(err)
	ml := multilock.New(mutex.New(c, name+"-ml-a"), mutex.New(c, name+"-ml-b"))
	lock(ml)
	rl := redlock.New([]redis.UniversalClient{c}, name+"-rl")
	lock(rl)
	el := election.New(c, name+"-el")
	_, err = el.Campaign(ctx, "v")
	must(err)

	const d, stall = 500 * time.Millisecond, 2500 * time.Millisecond
	s.Pause(stall)
	resumed := time.Now().Add(stall)
	byDeadline(t, d, map[string]func(ctx context.Context) error{
		"mutex.Unlock": plain.Unlock,
		"mutex.Unlock (owner)": func(ctx context.Context) error {
			return owned.Unlock(latchkey.WithOwnerID(ctx, latchkey.OwnerID(octx)))
		},
		"fairlock.Unlock":          fair.Unlock,
		"rwlock.Unlock":            rw.Unlock,
		"rwlock.RUnlock":           rd.RUnlock,
		"mutex.ForceUnlock":        func(ctx context.Context) error { _, err := forced.ForceUnlock(ctx); return err },
		"semaphore.Release":        func(ctx context.Context) error { return sem.Release(ctx, 1) },
		"Permit.Release":           p1.Release,
		"permitsemaphore.Release":  func(ctx context.Context) error { return ps.Release(ctx, p2.ID()) },
		"ReleaseAll":               func(ctx context.Context) error { return ps.ReleaseAll(ctx, p3.ID()) },
		"countdownlatch.CountDown": latch.CountDown,
		"multilock.Unlock":         ml.Unlock,
		"redlock.Unlock":           rl.Unlock,
		"election.Resign":          el.Resign,
		"mutex.IsLocked":           func(ctx context.Context) error { _, err := plain.IsLocked(ctx); return err },
		"mutex.TTL":                func(ctx context.Context) error { _, err := plain.TTL(ctx); return err },
		"mutex.HoldCount": func(ctx context.Context) error {
			_, err := owned.HoldCount(latchkey.WithOwnerID(ctx, latchkey.OwnerID(octx)))
			return err
		},
		"rwlock.IsLocked":            func(ctx context.Context) error { _, err := rw.IsLocked(ctx); return err },
		"semaphore.AvailablePermits": func(ctx context.Context) error { _, err := sem.AvailablePermits(ctx); return err },
		"permitsemaphore.AvailablePermits": func(ctx context.Context) error {
			_, err := ps.AvailablePermits(ctx)
			return err
		},
		"countdownlatch.Count": func(ctx context.Context) error { _, err := latch.Count(ctx); return err },
		"election.Leader":      func(ctx context.Context) error { _, err := el.Leader(ctx); return err },
	})

	// The server answers again; the releases left in the background land.
	time.Sleep(time.Until(resumed))
	flight.Settle()
	other := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	// A RedLock node that did not answer within the node timeout keeps
	// its hold until the lease ends, as the redlock doc says: not checked.
	for _, n := range []string{"-plain", "-fair", "-rw", "-rd", "-forced", "-ml-a", "-ml-b", "-el"} {
		if held, err := mutex.New(other, name+n).IsLocked(ctx); err != nil || held {
			t.Errorf("lock %s after the stall: held = %v, %v; want it released once the server answered", n, held, err)
		}
	}
	if n, err := owned.HoldCount(octx); err != nil || n != 1 {
		t.Errorf("owner's holds after one Unlock = %d, %v; want 1: the release counts once", n, err)
	}
	if n, err := semaphore.New(other, name+"-sem").AvailablePermits(ctx); err != nil || n != 2 {
		t.Errorf("semaphore permits after one Release = %d, %v; want 2: back once", n, err)
	}
	if n, err := permitsemaphore.New(other, name+"-ps").AvailablePermits(ctx); err != nil || n != 3 {
		t.Errorf("permit semaphore permits after the releases = %d, %v; want 3", n, err)
	}
	if n, err := countdownlatch.New(other, name+"-latch").Count(ctx); err != nil || n != 1 {
		t.Errorf("latch count after one CountDown = %d, %v; want 1: counted once", n, err)
	}
	// A plain hold's Unlock retried after it returned early finds nothing
	// left to release: the retry is harmless.
	if err := plain.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("a retried Unlock after the early return = %v, want ErrNotHeld", err)
	}
}

// Against a server that is gone, a clean-up call with a deadline returns by
// it, rather than after the client's ride-out.
func TestContract_cleanupByDeadlineAgainstDeadServer(t *testing.T) {
	c := deadClient(t)
	octx := latchkey.WithOwner(context.Background())
	byDeadline(t, 300*time.Millisecond, map[string]func(ctx context.Context) error{
		"mutex.Unlock (owner)": func(ctx context.Context) error {
			return mutex.New(c, t.Name()).Unlock(latchkey.WithOwnerID(ctx, latchkey.OwnerID(octx)))
		},
		"countdownlatch.CountDown": countdownlatch.New(c, t.Name()).CountDown,
		"semaphore.Release":        func(ctx context.Context) error { return semaphore.New(c, t.Name()).Release(ctx, 1) },
	})
}
