package multilock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/multilock"
)

func TestMultiLock_Done_neverHeld(t *testing.T) {
	m := multilock.New(newReporter())
	select {
	case <-m.Done():
	default:
		t.Fatal("Done of a MultiLock never held is not closed")
	}
	if err := m.Err(); err != nil {
		t.Fatalf("Err of a MultiLock never held = %v, want nil", err)
	}
}

// Unlock ends the hold: Done closes, Err stays nil, and the context of
// LockContext is cancelled with context.Canceled.
func TestMultiLock_LockContext_unlock(t *testing.T) {
	ctx := context.Background()
	m := multilock.New(newFake(), newReporter())
	hctx, err := m.LockContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := m.Done()
	select {
	case <-done:
		t.Fatalf("Done closed while held, Err = %v", m.Err())
	case <-hctx.Done():
		t.Fatalf("LockContext's context ended while held: %v", context.Cause(hctx))
	default:
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !ended(done) || !ended(hctx.Done()) {
		t.Fatal("the hold's Done or context not ended by Unlock")
	}
	if err := m.Err(); err != nil {
		t.Errorf("Err after Unlock = %v, want nil", err)
	}
	if cause := context.Cause(hctx); cause != context.Canceled {
		t.Errorf("context.Cause after Unlock = %v, want context.Canceled", cause)
	}
}

// The first member lost ends the hold, naming the member; the other members
// stay held until Unlock, which releases them and reports the lost one.
func TestMultiLock_memberLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		lost int
		want string
	}{
		{"named", 1, `multilock: member 1 "orders": fake:`},
		{"unnamed", 2, `multilock: member 2 (*multilock_test.reporter): fake:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			plain, nm, unnamed := newFake(), named{newReporter(), "orders"}, newReporter()
			rs := []*reporter{nil, nm.reporter, unnamed}
			m := multilock.New(plain, nm, unnamed)
			hctx, err := m.LockContext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rs[tc.lost].lose()
			if !ended(m.Done()) || !ended(hctx.Done()) {
				t.Fatal("Done or LockContext's context not ended 5s after a member was lost")
			}
			err = m.Err()
			if !errors.Is(err, latchkey.ErrLost) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Err = %v, want ErrLost starting %q", err, tc.want)
			}
			if cause := context.Cause(hctx); cause != err {
				t.Errorf("context.Cause = %v, want Err's %v", cause, err)
			}
			other := rs[3-tc.lost]
			if !plain.held() || !other.held() {
				t.Fatal("the members not lost were released by the loss")
			}
			err = m.Unlock(ctx)
			label := strings.TrimPrefix(strings.SplitN(tc.want, ":", 3)[1], " ")
			if !errors.Is(err, latchkey.ErrNotHeld) || !strings.Contains(err.Error(), "unlock "+label) {
				t.Fatalf("Unlock after the loss = %v, want ErrNotHeld naming %s", err, label)
			}
			if strings.Count(err.Error(), "multilock: unlock member") != 1 {
				t.Errorf("Unlock after the loss = %v, want the lost member's error alone", err)
			}
			if plain.held() || other.held() {
				t.Fatal("Unlock after the loss left the other members held")
			}
			if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
				t.Errorf("Err after the Unlock = %v, want the loss still", err)
			}
		})
	}
}

// A loss that Unlock finds before the MultiLock saw it ends the hold as
// lost too, however the two interleave: the Unlock reports ErrNotHeld
// exactly when Err and LockContext's context report ErrLost.
func TestMultiLock_lossRacesUnlock(t *testing.T) {
	ctx := context.Background()
	a, b := newReporter(), newReporter()
	m := multilock.New(a, b)
	var lostCount int
	for round := range 300 {
		hctx, err := m.LockContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lost := make(chan bool, 1)
		go func() { lost <- b.lose() }()
		uerr := m.Unlock(ctx)
		wasLost := <-lost
		if !ended(m.Done()) || !ended(hctx.Done()) {
			t.Fatalf("round %d: hold not ended", round)
		}
		notHeld, hErr, cause := errors.Is(uerr, latchkey.ErrNotHeld), m.Err(), context.Cause(hctx)
		switch {
		case notHeld != wasLost:
			t.Fatalf("round %d: member lost %v, Unlock = %v", round, wasLost, uerr)
		case wasLost && (!errors.Is(hErr, latchkey.ErrLost) || cause != hErr):
			t.Fatalf("round %d: after a loss Err = %v, cause %v; want the same ErrLost", round, hErr, cause)
		case !wasLost && (hErr != nil || cause != context.Canceled):
			t.Fatalf("round %d: after an Unlock Err = %v, cause %v; want nil, context.Canceled", round, hErr, cause)
		}
		if a.held() || b.held() {
			t.Fatalf("round %d: a member still held after Unlock", round)
		}
		if wasLost {
			lostCount++
		}
	}
	t.Logf("%d of 300 rounds lost the member before its Unlock", lostCount)
}

// Goroutines sharing a MultiLock each watch their own hold: no hold is
// reported ended before its Unlock, and each ends by its Unlock.
func TestMultiLock_LockContext_shared(t *testing.T) {
	a, b := newReporter(), newReporter()
	m := multilock.New(a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for range 100 {
				hctx, err := m.LockContext(ctx)
				if err != nil {
					errs[w] = err
					return
				}
				if hctx.Err() != nil {
					errs[w] = errEndedEarly
					return
				}
				if err := m.Unlock(ctx); err != nil {
					errs[w] = err
					return
				}
				if !ended(hctx.Done()) || context.Cause(hctx) != context.Canceled {
					errs[w] = errNotByUnlock
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

var (
	errEndedEarly  = errors.New("a hold ended before its Unlock")
	errNotByUnlock = errors.New("a hold did not end by its Unlock")
)

// A MultiLock inside another is a member like any: its loss ends the outer
// hold, and the outer Unlock releases what the inner one still holds.
func TestMultiLock_nestedLoss(t *testing.T) {
	ctx := context.Background()
	a, b, x := newReporter(), named{newReporter(), "deep"}, newReporter()
	inner := multilock.New(a, b)
	outer := multilock.New(x, inner)
	hctx, err := outer.LockContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.lose()
	if !ended(hctx.Done()) {
		t.Fatal("the outer hold not ended 5s after an inner member was lost")
	}
	const want = `multilock: member 1 (*multilock.MultiLock): multilock: member 1 "deep": fake:`
	if err := context.Cause(hctx); !errors.Is(err, latchkey.ErrLost) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("cause = %v, want ErrLost starting %q", err, want)
	}
	err = outer.Unlock(ctx)
	if !errors.Is(err, latchkey.ErrNotHeld) || !strings.Contains(err.Error(), `member 1 "deep"`) {
		t.Fatalf("Unlock = %v, want ErrNotHeld naming the inner member", err)
	}
	if a.held() || x.held() {
		t.Fatal("members left held after the outer Unlock")
	}
}
