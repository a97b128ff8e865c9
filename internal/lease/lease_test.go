package lease_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/redistest"
	"go.uber.org/goleak"
)

// The watchdog keeps a lock with a 1.5s lease alive for 2s, over 3
// renewals: its TTL never runs out, and once the hold is removed the key
// expires. (A shorter lease would not survive a loaded machine, whose
// renewals may run a second late: slack.)
func TestScheduler_renewalKeepsLockAlive(t *testing.T) {
	const d = 1500 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	ctx := context.Background()
	key := keyName(t, 0)
	h, l := lock(t, c, key, d)
	s := schedFor(c)
	s.Add(h, time.Now())

	var low time.Duration = d
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 {
			t.Fatalf("PTTL = %v: the lock expired while renewed", ttl)
		}
		low = min(low, ttl)
	}
	t.Logf("lease %v: lowest PTTL sampled over 2s: %v", d, low)
	if errs := l.calls(); len(errs) != 0 {
		t.Fatalf("Lost called: %v", errs)
	}

	if !s.Remove(h) {
		t.Error("Remove = false for a live hold")
	}
	if s.Remove(h) {
		t.Error("second Remove = true")
	}
	deadline := time.Now().Add(d + slack)
	for c.Exists(ctx, key).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("the key is still alive after Remove and its lease: still renewed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Holds with the same lease are renewed together, at most lease.MaxBatch
// per script call: 250 holds, 3 calls per round, on a single server
// whatever slots their keys would have in a cluster.
func TestScheduler_batches(t *testing.T) {
	const holds, d = 250, 1500 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	var calls scriptCalls
	c.AddHook(&calls)
	s := schedFor(c)
	var hs []*lease.Hold
	var ls []*lost
	var names []string
	for i := range holds {
		h, l := lock(t, c, keyName(t, i), d)
		hs, ls, names = append(hs, h), append(ls, l), append(names, keyName(t, i))
	}
	acquired := restart(t, c, names, d)
	for _, h := range hs {
		s.Add(h, acquired)
	}
	// A round's calls run concurrently, and a round starts only when the
	// previous one is over: the first 6 calls are the first 2 rounds.
	deadline := time.Now().Add(2*d + slack)
	for calls.calls.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, h := range hs {
		s.Remove(h)
	}
	keys, errs := calls.snapshot()
	if len(errs) != 0 {
		t.Fatalf("renewal errors: %v", errs)
	}
	if len(keys) < 6 {
		t.Fatalf("%d script calls carrying %v keys in 2 rounds; want 3 per round", len(keys), keys)
	}
	for r := 0; r < 6; r += 3 {
		round := slices.Clone(keys[r : r+3])
		slices.Sort(round)
		if !slices.Equal(round, []int{50, 100, 100}) {
			t.Fatalf("round %d carried %v keys per call (calls: %v), want 100, 100 and 50", r/3, round, keys)
		}
	}
	t.Logf("%d holds: 3 script calls per round", holds)
	for i, l := range ls {
		if errs := l.calls(); len(errs) != 0 {
			t.Fatalf("hold %d lost: %v", i, errs)
		}
	}
}

// A hold whose key was deleted (or taken by another owner) is declared lost
// within one renewal period, with ErrLost (and told again, with ErrExpired,
// when its validity ends: see TestScheduler_goneToldAgainAtValidity), and
// its key is never written again.
func TestScheduler_goneIsLost(t *testing.T) {
	const d = 600 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	ctx := context.Background()
	s := schedFor(c)
	deleted, lDeleted := lock(t, c, keyName(t, 0), d)
	taken, lTaken := lock(t, c, keyName(t, 1), d)
	kept, lKept := lock(t, c, keyName(t, 2), d)
	start := time.Now()
	for _, h := range []*lease.Hold{deleted, taken, kept} {
		s.Add(h, start)
	}
	c.Del(ctx, keyName(t, 0))
	c.Del(ctx, keyName(t, 1))
	c.HSet(ctx, keyName(t, 1), "someone-else:1", 1)

	for i, l := range []*lost{lDeleted, lTaken} {
		at := l.wait(t, d/3+slack)
		t.Logf("hold %d declared lost %v after the key went", i, at.Sub(start))
	}
	time.Sleep(2 * d) // several more rounds
	for i, l := range []*lost{lDeleted, lTaken} {
		errs := l.calls()
		if len(errs) == 0 || len(errs) > 2 || !errors.Is(errs[0], lockerr.ErrLost) || errors.Is(errs[0], lease.ErrExpired) ||
			len(errs) == 2 && !errors.Is(errs[1], lease.ErrExpired) {
			t.Errorf("hold %d: Lost called with %v, want ErrLost, then at most ErrExpired", i, errs)
		}
	}
	if n := c.Exists(ctx, keyName(t, 0)).Val(); n != 0 {
		t.Error("the deleted lock was re-created")
	}
	if ttl := c.PTTL(ctx, keyName(t, 1)).Val(); ttl != -1 {
		t.Errorf("the other owner's lock got PTTL %v: renewed by a lost hold", ttl)
	}
	if errs := lKept.calls(); len(errs) != 0 {
		t.Errorf("the live hold was lost: %v", errs)
	}
	if s.Remove(deleted) || s.Remove(taken) {
		t.Error("Remove = true for a lost hold")
	}
	if n := s.Len(); n != 1 {
		t.Errorf("Len() = %d, want 1", n)
	}
	s.Remove(kept)
}

// A renewal error is retried: an outage shorter than the validity costs
// nothing; a longer one declares the hold lost once, when its validity
// ends, with ErrLost wrapping the error.
func TestScheduler_transientErrors(t *testing.T) {
	const d = 600 * time.Millisecond
	errDown := errors.New("connection refused (injected)")

	t.Run("short", func(t *testing.T) {
		c := client(t, redistest.SharedServer(t))
		var calls scriptCalls
		c.AddHook(&calls)
		h, l := lock(t, c, keyName(t, 0), d)
		schedFor(c).Add(h, time.Now())
		time.Sleep(d / 6)
		calls.failWith(errDown) // from d/6 to d/2: the renewal at d/3 fails
		time.Sleep(d / 3)
		calls.failWith(nil)
		time.Sleep(2 * d)
		if errs := l.calls(); len(errs) != 0 {
			t.Fatalf("Lost called after a %v outage with a %v lease: %v", d/3, d, errs)
		}
		if ttl := c.PTTL(context.Background(), keyName(t, 0)).Val(); ttl <= 0 {
			t.Fatalf("PTTL = %v after the outage", ttl)
		}
		t.Logf("%d script calls, the failed ones retried", calls.calls.Load())
	})

	t.Run("long", func(t *testing.T) {
		c := client(t, redistest.SharedServer(t))
		var calls scriptCalls
		c.AddHook(&calls)
		h, l := lock(t, c, keyName(t, 0), d)
		acquired := time.Now()
		schedFor(c).Add(h, acquired)
		calls.failWith(errDown)
		at := l.wait(t, d+slack)
		if valid := d - lease.Drift(d); at.Before(acquired.Add(valid)) {
			t.Errorf("declared lost %v after acquiring, before its %v validity (lease less drift) ended", at.Sub(acquired), valid)
		}
		t.Logf("declared lost %v after the last renewal (lease %v)", at.Sub(acquired), d)
		retries := calls.calls.Load()
		calls.failWith(nil)
		time.Sleep(d)
		errs := l.calls()
		if len(errs) != 1 || !errors.Is(errs[0], lockerr.ErrLost) || !errors.Is(errs[0], errDown) {
			t.Fatalf("Lost called with %v, want once, with ErrLost wrapping the renewal error", errs)
		}
		if n := calls.calls.Load(); n != retries {
			t.Errorf("%d renewals after the hold was lost", n-retries)
		}
		if retries < 3 {
			t.Errorf("%d renewal calls, want retries before giving up", retries)
		}
	})
}

// A frozen server (SIGSTOP) blocks the renewal call: a pause shorter than
// the validity is survived; a longer one declares the hold lost when its
// validity ends, not when the server answers again or the client's
// ReadTimeout (5s) expires.
func TestScheduler_pausedServer(t *testing.T) {
	const d = 600 * time.Millisecond
	t.Run("short", func(t *testing.T) {
		srv := redistest.StartServer(t)
		c := client(t, srv)
		h, l := lock(t, c, keyName(t, 0), d)
		schedFor(c).Add(h, time.Now())
		time.Sleep(d / 4)
		srv.Pause(d / 4) // across the renewal at d/3
		time.Sleep(2 * d)
		if errs := l.calls(); len(errs) != 0 {
			t.Fatalf("Lost called after a %v pause with a %v lease: %v", d/4, d, errs)
		}
		if ttl := c.PTTL(context.Background(), keyName(t, 0)).Val(); ttl <= 0 {
			t.Fatalf("PTTL = %v after the pause", ttl)
		}
	})
	t.Run("long", func(t *testing.T) {
		const pause = 3 * time.Second
		srv := redistest.StartServer(t)
		c := client(t, srv)
		h, l := lock(t, c, keyName(t, 0), d)
		acquired := time.Now()
		schedFor(c).Add(h, acquired)
		srv.Pause(pause)
		at := l.wait(t, pause+slack)
		t.Logf("server paused for %v: declared lost %v after the last renewal (lease %v)", pause, at.Sub(acquired), d)
		// At its deadline, not when the server answers again or the
		// client's ReadTimeout runs out.
		if late, valid := at.Sub(acquired), d-lease.Drift(d); late < valid || late > valid+slack {
			t.Errorf("declared lost %v after the last renewal, want when its %v validity (lease less drift) ends", late, valid)
		}
		time.Sleep(pause - time.Since(acquired) + d/3)
		if errs := l.calls(); len(errs) != 1 || !errors.Is(errs[0], lockerr.ErrLost) {
			t.Errorf("Lost called with %v, want once with ErrLost", errs)
		}
		if n := c.Exists(context.Background(), keyName(t, 0)).Val(); n != 0 {
			t.Error("the lost lock's key still exists after the pause")
		}
	})
}

// The scheduler's goroutine runs only while it renews holds: a hold
// released before its first renewal never starts it, and it exits as soon
// as the last hold it renews is removed or lost.
func TestScheduler_goroutineExits(t *testing.T) {
	const d = 600 * time.Millisecond // first renewal after 200ms
	c := client(t, redistest.SharedServer(t))
	ctx := context.Background()
	c.Ping(ctx)
	base := runtime.NumGoroutine()
	noLeak := goleak.IgnoreCurrent()
	s := schedFor(c)

	short, _ := lock(t, c, keyName(t, 8), d)
	s.Add(short, time.Now())
	if runtime.NumGoroutine() > base {
		t.Fatal("a hold not yet due for renewal started a goroutine")
	}
	s.Remove(short)

	var hs []*lease.Hold
	for i := range 3 {
		h, _ := lock(t, c, keyName(t, i), d)
		hs = append(hs, h)
		s.Add(h, time.Now())
	}
	time.Sleep(d/3 + 100*time.Millisecond) // past the first renewal
	if runtime.NumGoroutine() <= base {
		t.Fatal("the scheduler goroutine is not running")
	}
	for _, h := range hs {
		s.Remove(h)
	}
	goleak.VerifyNone(t, noLeak)

	// Again, and the last hold is lost rather than removed.
	h, l := lock(t, c, keyName(t, 9), 300*time.Millisecond)
	s.Add(h, time.Now())
	c.Del(ctx, keyName(t, 9))
	l.wait(t, slack)
	goleak.VerifyNone(t, noLeak)
}

// Close declares every hold lost with ErrClosed (and ErrLost) and stops the
// renewals; a hold added later is declared lost at once.
func TestClose(t *testing.T) {
	const d = 600 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	var calls scriptCalls
	c.AddHook(&calls)
	s := schedFor(c)
	h, l := lock(t, c, keyName(t, 0), d)
	s.Add(h, time.Now())
	closeSched(c)
	errs := l.calls()
	if len(errs) != 1 || !errors.Is(errs[0], lockerr.ErrClosed) || !errors.Is(errs[0], lockerr.ErrLost) {
		t.Fatalf("Lost called with %v, want once with ErrClosed and ErrLost", errs)
	}
	if s.Len() != 0 || s.Remove(h) {
		t.Error("the closed scheduler still has the hold")
	}

	// Add on the closed scheduler declares the hold lost at once, from
	// another goroutine: the caller may hold the lock Lost takes.
	h2, l2 := lock(t, c, keyName(t, 1), d)
	var callerMu sync.Mutex
	h2.Lost = func(err error) {
		callerMu.Lock()
		defer callerMu.Unlock()
		l2.call(err)
	}
	added := make(chan struct{})
	go func() {
		callerMu.Lock()
		s.Add(h2, time.Now())
		callerMu.Unlock()
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(slack):
		t.Fatal("Add deadlocked: it called Lost while its caller held the lock Lost takes")
	}
	l2.wait(t, slack)
	if errs := l2.calls(); len(errs) != 1 || !errors.Is(errs[0], lockerr.ErrClosed) {
		t.Errorf("Add after Close: Lost called with %v, want once with ErrClosed", errs)
	}
	time.Sleep(d / 2)
	if n := calls.calls.Load(); n != 0 {
		t.Errorf("%d renewals after Close", n)
	}
}
