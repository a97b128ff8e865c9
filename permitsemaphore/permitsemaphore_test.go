package permitsemaphore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/permitsemaphore"
)

const permanentScore = 922337203685477

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestSemaphore_redissonLayout(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem := permitsemaphore.New(client(t, s), name)
	raw := s.Client(t)
	if ok, err := sem.TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	before := time.Now().UnixMilli()
	leased, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	forever, err := sem.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMilli()
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Fatalf("key %s = %q, want \"1\"", name, v)
	}
	members, err := raw.ZRangeWithScores(ctx, "{"+name+"}:timeout", 0, -1).Result()
	if err != nil || len(members) != 2 {
		t.Fatalf("timeout zset = %v, %v; want 2 members", members, err)
	}
	for _, m := range members {
		id := hex.EncodeToString([]byte(m.Member.(string)))
		switch id {
		case leased.ID():
			if end := int64(m.Score); end < before+60_000 || end > after+60_000 {
				t.Errorf("leased permit's score = %d, want now+60000 in [%d, %d]", end, before+60_000, after+60_000)
			}
		case forever.ID():
			if m.Score != permanentScore {
				t.Errorf("permanent permit's score = %v, want %d", m.Score, permanentScore)
			}
		default:
			t.Errorf("zset member %s (%d bytes) is none of the permits", id, len(m.Member.(string)))
		}
	}
	for _, p := range []*permitsemaphore.Permit{leased, forever} {
		if !idPattern.MatchString(p.ID()) {
			t.Errorf("permit id %q, want 32 lowercase hex characters", p.ID())
		}
	}

	sub := raw.Subscribe(ctx, "redisson_sc:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := leased.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if msg, err := sub.ReceiveMessage(mctx); err != nil || msg.Payload != "2" {
		t.Fatalf("release message = %v, %v; want the new count \"2\"", msg, err)
	}
}

// Redisson's testSetPermits and testAddPermits flows (§6.5), on miniredis.
func TestSemaphore_counts(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	check := func(total, available, acquired int64) {
		t.Helper()
		tot, err1 := sem.Permits(ctx)
		av, err2 := sem.AvailablePermits(ctx)
		ac, err3 := sem.AcquiredPermits(ctx)
		if err := errors.Join(err1, err2, err3); err != nil || tot != total || av != available || ac != acquired {
			t.Fatalf("total/available/acquired = %d/%d/%d (%v), want %d/%d/%d", tot, av, ac, err, total, available, acquired)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(0, 0, 0)
	must(sem.SetPermits(ctx, 10))
	check(10, 10, 0)
	if ok, err := sem.TrySetPermits(ctx, 15); ok || err != nil {
		t.Fatalf("TrySetPermits on a set semaphore = %v, %v", ok, err)
	}
	must(sem.SetPermits(ctx, 15))
	check(15, 15, 0)
	must(sem.SetPermits(ctx, 5))
	check(5, 5, 0)
	ps, err := sem.AcquireN(ctx, 3, permitsemaphore.Lease(time.Minute))
	must(err)
	check(5, 2, 3)
	must(sem.SetPermits(ctx, 3))
	check(3, 0, 3)
	must(sem.SetPermits(ctx, 2))
	check(2, -1, 3)
	must(ps[0].Release(ctx))
	check(2, 0, 2)
	must(sem.AddPermits(ctx, 5))
	check(7, 5, 2)
	must(sem.AddPermits(ctx, -10))
	check(-3, -5, 2)
}

func TestSemaphore_AcquireN(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 10); err != nil {
		t.Fatal(err)
	}
	ps, err := sem.AcquireN(ctx, 6, permitsemaphore.Lease(time.Minute))
	if err != nil || len(ps) != 6 {
		t.Fatalf("AcquireN(6) = %d permits, %v", len(ps), err)
	}
	ids := make([]string, len(ps))
	seen := map[string]bool{}
	for i, p := range ps {
		ids[i] = p.ID()
		if seen[ids[i]] || !idPattern.MatchString(ids[i]) {
			t.Fatalf("ids %q: want distinct 32-hex ids", ids)
		}
		seen[ids[i]] = true
	}
	if ps, ok, err := sem.TryAcquireN(ctx, 5, 0, 0); ok || ps != nil || err != nil {
		t.Fatalf("TryAcquireN(5 of 4) = %v, %v, %v", ps, ok, err)
	}
	available := func() int64 { n, _ := sem.AvailablePermits(ctx); return n }
	if err := sem.ReleaseAll(ctx, ids[:4]...); err != nil || available() != 8 {
		t.Fatalf("ReleaseAll(4) = %v, available %d; want 8", err, available())
	}
	// All or nothing: one id not held releases none.
	err = sem.ReleaseAll(ctx, ids[3], ids[4], ids[5])
	if !errors.Is(err, latchkey.ErrNotHeld) || available() != 8 {
		t.Fatalf("ReleaseAll with a released id = %v, available %d; want ErrNotHeld, 8", err, available())
	}
	if err := sem.ReleaseAll(ctx, ids[4:]...); err != nil || available() != 10 {
		t.Fatalf("ReleaseAll(2) = %v, available %d; want 10", err, available())
	}
}

func TestSemaphore_invalidPermits(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"AcquireN(0)":       func() error { _, err := sem.AcquireN(ctx, 0, 0); return err },
		"TryAcquireN(-1)":   func() error { _, _, err := sem.TryAcquireN(ctx, -1, time.Second, 0); return err },
		"SetPermits(-1)":    func() error { return sem.SetPermits(ctx, -1) },
		"TrySetPermits(-1)": func() error { _, err := sem.TrySetPermits(ctx, -1); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, latchkey.ErrInvalidPermits) {
			t.Errorf("%s = %v, want ErrInvalidPermits", name, err)
		}
	}
	if n, _ := sem.Permits(ctx); n != 5 {
		t.Errorf("Permits = %d after invalid calls, want 5", n)
	}
}

func TestSemaphore_Acquire_waitsForRelease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem, h := watched(t, s, name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	other := permitsemaphore.New(client(t, s), name) // another process
	p, err := other.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := sem.Acquire(ctx, permitsemaphore.Lease(time.Minute)); done <- err }()
	waitWaiters(t, h, 1)
	start := time.Now()
	if err := other.Release(ctx, p.ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("woken %v after the release", time.Since(start))
	case <-time.After(wait.Backstop / 2):
		t.Fatal("Acquire not woken by the release")
	}
}

// A waiting Acquire that is cancelled or times out leaves no permit behind.
func TestSemaphore_Acquire_cancelConsumesNothing(t *testing.T) {
	s := server(t)
	name := semName(t)
	sem, h := watched(t, s, name)
	bg := context.Background()
	if err := sem.SetPermits(bg, 3); err != nil {
		t.Fatal(err)
	}
	held, err := sem.Acquire(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { _, err := sem.AcquireN(ctx, 3, 0); done <- err }()
	waitWaiters(t, h, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled AcquireN = %v, want context.Canceled", err)
	}
	if ps, ok, err := sem.TryAcquireN(bg, 3, 100*time.Millisecond, 0); ok || ps != nil || err != nil {
		t.Fatalf("TryAcquireN(3, 2 available) = %v, %v, %v", ps, ok, err)
	}
	if av, ac := must2(sem.AvailablePermits(bg)), must2(sem.AcquiredPermits(bg)); av != 2 || ac != 1 {
		t.Fatalf("available %d, acquired %d; want 2, 1", av, ac)
	}
	if err := held.Release(bg); err != nil {
		t.Fatal(err)
	}
}

func must2(n int64, err error) int64 {
	if err != nil {
		return -1000
	}
	return n
}

// An attempt whose reply is lost took the permits all the same: the wait
// tries again, and the repeat finds its own permit ids taken, so Acquire
// returns them, holding them once.
func TestSemaphore_Acquire_lostReply(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	c := client(t, s)
	hook := &loseReply{}
	c.AddHook(hook)
	sem := permitsemaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	hook.armed.Store(true)
	ps, err := sem.AcquireN(ctx, 2, 0)
	if err != nil || len(ps) != 2 {
		t.Fatalf("AcquireN with its first reply lost = %v, %v; want the 2 permits", ps, err)
	}
	if av, ac := must2(sem.AvailablePermits(ctx)), must2(sem.AcquiredPermits(ctx)); av != 1 || ac != 2 {
		t.Fatalf("available %d, acquired %d; want 1, 2", av, ac)
	}
	if err := sem.ReleaseAll(ctx, ps[0].ID(), ps[1].ID()); err != nil {
		t.Fatal(err)
	}
}

// Asking for more permits than the semaphore has in all fails at once,
// rather than wait until ctx ends; a semaphore never set still waits, for
// another process may set it.
func TestSemaphore_Acquire_moreThanTotalFailsAtOnce(t *testing.T) {
	s := server(t)
	bg := context.Background()
	sem := permitsemaphore.New(client(t, s), semName(t))
	if err := sem.SetPermits(bg, 2); err != nil {
		t.Fatal(err)
	}
	held, err := sem.Acquire(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	if _, err := sem.AcquireN(ctx, 3, 0); !errors.Is(err, latchkey.ErrInvalidPermits) || ctx.Err() != nil {
		t.Fatalf("AcquireN(3) of a semaphore of 2 = %v (ctx %v), want ErrInvalidPermits at once", err, ctx.Err())
	}
	if av, ac := must2(sem.AvailablePermits(bg)), must2(sem.AcquiredPermits(bg)); av != 1 || ac != 1 {
		t.Fatalf("available %d, acquired %d after the refusal; want 1, 1", av, ac)
	}
	if err := held.Release(bg); err != nil {
		t.Fatal(err)
	}
	unset := permitsemaphore.New(client(t, s), semName(t))
	if _, ok, err := unset.TryAcquireN(bg, 3, 50*time.Millisecond, 0); ok || err != nil {
		t.Fatalf("TryAcquireN of a semaphore never set = %v, %v; want a wait that runs out", ok, err)
	}
}
