package latchkey_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
)

func init() {
	register("multilock/all-or-nothing", multiAllOrNothing)
	register("multilock/opposite-orders", multiOppositeOrders)
	register("multilock/unlock-joins-errors", multiUnlockJoins)
	register("multilock/mixed-primitives", multiMixed)
}

func multiCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// multiLocked reports which of ms are held by anyone.
func multiLocked(t *testing.T, ms ...*mutex.Mutex) []bool {
	t.Helper()
	out := make([]bool, len(ms))
	for i, m := range ms {
		ok, err := m.IsLocked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = ok
	}
	return out
}

// A member held by another client: TryLock fails and takes nothing; once
// it is free, TryLock takes every member and Unlock frees them all.
func multiAllOrNothing(t *testing.T, e *env) {
	ctx := multiCtx(t)
	c := e.Client()
	a, b, x := mutex.New(c, e.Name+":a"), mutex.New(c, e.Name+":b"), mutex.New(c, e.Name+":c")
	other := mutex.New(e.Client(), e.Name+":c")
	if err := other.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	m := multilock.New(a, b, x)
	if ok, err := m.TryLock(ctx, 50*time.Millisecond); ok || err != nil {
		t.Fatalf("TryLock with a member held elsewhere = %v, %v; want false, nil", ok, err)
	}
	if got := multiLocked(t, a, b); got[0] || got[1] {
		t.Fatalf("members left held: %v", got)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock with every member free = %v, %v; want true, nil", ok, err)
	}
	if got := multiLocked(t, a, b, x); !got[0] || !got[1] || !got[2] {
		t.Fatalf("after TryLock: held = %v", got)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := multiLocked(t, a, b, x); got[0] || got[1] || got[2] {
		t.Fatalf("after Unlock: held = %v", got)
	}
}

// Two clients take the same members in opposite orders: both finish and
// never hold at once.
func multiOppositeOrders(t *testing.T, e *env) {
	const rounds = 10
	ctx := multiCtx(t)
	c1, c2 := e.Client(), e.Client()
	ms := []*multilock.MultiLock{
		multilock.New(mutex.New(c1, e.Name+":a"), mutex.New(c1, e.Name+":b")),
		multilock.New(mutex.New(c2, e.Name+":b"), mutex.New(c2, e.Name+":a")),
	}
	var (
		holders, overlaps atomic.Int64
		errs              = make([]error, len(ms))
		wg                sync.WaitGroup
	)
	for w, m := range ms {
		wg.Go(func() {
			for range rounds {
				if err := m.Lock(ctx); err != nil {
					errs[w] = err
					return
				}
				if holders.Add(1) > 1 {
					overlaps.Add(1)
				}
				holders.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d overlapping holds", n)
	}
}

// Unlock of members not held joins one ErrNotHeld per member.
func multiUnlockJoins(t *testing.T, e *env) {
	c := e.Client()
	m := multilock.New(mutex.New(c, e.Name+":a"), mutex.New(c, e.Name+":b"))
	err := m.Unlock(multiCtx(t))
	var joined interface{ Unwrap() []error }
	if !errors.Is(err, latchkey.ErrNotHeld) || !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("Unlock = %v, want ErrNotHeld from both members", err)
	}
}

// A mutex, a fair lock and an rwlock's write side taken together; the
// rwlock's read side is refused meanwhile.
func multiMixed(t *testing.T, e *env) {
	ctx := multiCtx(t)
	c := e.Client()
	m := multilock.New(
		mutex.New(c, e.Name+":mutex"),
		fairlock.New(c, e.Name+":fair"),
		rwlock.New(c, e.Name+":rw").WriteLock(),
	)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	reader := rwlock.New(e.Client(), e.Name+":rw").ReadLock()
	if ok, err := reader.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("read side while the multilock holds the write side = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := reader.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("read side after Unlock = %v, %v; want true, nil", ok, err)
	}
	if err := reader.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
