package multilock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/multilock"
)

func TestNew_panics(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func()
	}{
		{"no locks", func() { multilock.New() }},
		{"nil lock", func() { multilock.New(newFake(), nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "multilock: New: ") {
					t.Fatalf("recovered %v, want a multilock: New: panic", r)
				}
			}()
			tc.new()
		})
	}
}

func TestMultiLock_lockUnlock(t *testing.T) {
	ctx := context.Background()
	fs := []*fakeLock{newFake(), newFake(), newFake()}
	m := multilock.New(fs[0], fs[1], fs[2])
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		if !f.held() {
			t.Errorf("member %d not held after Lock", i)
		}
	}
	if ok, err := m.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("TryLock on a held MultiLock = %v, %v; want false, nil", ok, err)
	}
	for i, f := range fs {
		if !f.held() {
			t.Errorf("member %d released by a failed TryLock of another acquisition", i)
		}
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		if f.held() {
			t.Errorf("member %d still held after Unlock", i)
		}
	}
	err := m.Unlock(ctx)
	if !errors.Is(err, latchkey.ErrNotHeld) || strings.Count(err.Error(), "multilock: unlock member") != 3 {
		t.Fatalf("Unlock of an unlocked MultiLock = %v, want ErrNotHeld from each of the 3 members", err)
	}
}

// A member held by someone else: TryLock fails within its wait, holding
// nothing, and touches that member only through its own wait.
func TestMultiLock_TryLock_memberHeld(t *testing.T) {
	ctx := context.Background()
	fs := []*fakeLock{newFake(), newFake(), newFake()}
	fs[1].token <- struct{}{} // held elsewhere
	m := multilock.New(fs[0], fs[1], fs[2])
	for _, wait := range []time.Duration{0, 100 * time.Millisecond} {
		start := time.Now()
		ok, err := m.TryLock(ctx, wait)
		d := time.Since(start)
		if ok || err != nil {
			t.Fatalf("TryLock(%v) = %v, %v; want false, nil", wait, ok, err)
		}
		if d < wait || d > wait+2*time.Second {
			t.Errorf("TryLock(%v) returned after %v", wait, d)
		}
		if fs[0].held() || fs[2].held() {
			t.Fatalf("TryLock(%v) left members held: %v %v", wait, fs[0].held(), fs[2].held())
		}
	}
	if n := fs[2].tries.Load(); n != 0 {
		t.Errorf("member 2 was tried %d times; nothing after a busy member should be", n)
	}
}

// Lock waits for the busy member through that member's own wait, holding
// nothing meanwhile, and gets everything once it is free.
func TestMultiLock_Lock_waitsHoldingNothing(t *testing.T) {
	ctx := context.Background()
	fs := []*fakeLock{newFake(), newFake()}
	fs[1].token <- struct{}{}
	m := multilock.New(fs[0], fs[1])
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	time.Sleep(50 * time.Millisecond)
	if fs[0].held() {
		t.Fatal("member 0 held while waiting for member 1")
	}
	<-fs[1].token // the other holder unlocks
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Lock still waiting 5s after the busy member was released")
	}
	if !fs[0].held() || !fs[1].held() {
		t.Fatal("Lock returned without holding every member")
	}
}

// A member failing releases what was taken and names the member.
func TestMultiLock_memberError(t *testing.T) {
	ctx := context.Background()
	ok0, bad := newFake(), newFake()
	bad.fail = errBroken
	m := multilock.New(ok0, bad)
	for _, lock := range []func() error{
		func() error { return m.Lock(ctx) },
		func() error { _, err := m.TryLock(ctx, time.Second); return err },
	} {
		err := lock()
		if !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "member 1") {
			t.Fatalf("error = %v, want errBroken naming member 1", err)
		}
		if ok0.held() {
			t.Fatal("member 0 left held after member 1 failed")
		}
	}
}

// A ctx that ends while Lock waits gives ctx's error and nothing held.
func TestMultiLock_Lock_ctxEnds(t *testing.T) {
	fs := []*fakeLock{newFake(), newFake()}
	fs[1].token <- struct{}{}
	m := multilock.New(fs[0], fs[1])
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := m.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, want context.DeadlineExceeded", err)
	}
	if fs[0].held() {
		t.Fatal("member 0 left held")
	}
}

// Many MultiLocks over the same members in different orders: no deadlock,
// and never two holders at once.
func TestMultiLock_oppositeOrders(t *testing.T) {
	a, b, c := newFake(), newFake(), newFake()
	orders := [][]multilock.Member{{a, b, c}, {c, b, a}, {b, c, a}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ms []multilock.Member
	for w := range 6 {
		ms = append(ms, multilock.New(orders[w%len(orders)]...))
	}
	overlaps, _, err := hammer(ctx, ms, 200, 0)
	if err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Errorf("%d overlapping holds", overlaps)
	}
}

func TestMultiLock_Locker(t *testing.T) {
	a, b := newFake(), newFake()
	l := multilock.New(a, b).Locker()
	l.Lock()
	if !a.held() || !b.held() {
		t.Fatal("Locker().Lock did not take every member")
	}
	l.Unlock()
	defer func() {
		if recover() == nil {
			t.Fatal("Locker().Unlock of an unlocked MultiLock did not panic")
		}
	}()
	l.Unlock()
}
