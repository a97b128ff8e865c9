package lockcore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/owner"
)

func TestLock_plain(t *testing.T) {
	f := &fake{attempt: func(int, *lockcore.Waiter) (lockcore.Attempt, error) {
		return lockcore.Attempt{OK: true, Token: 7, Holds: 1}, nil
	}}
	l, _ := newLock(t, f)
	mustLock(t, l, context.Background())

	at := f.ops("attempt")
	if len(at) != 1 {
		t.Fatalf("%d attempts, want 1", len(at))
	}
	a := at[0]
	if !owner.Latchkey(a.id) || a.reentrant || a.try || a.req != "" || a.key != a.id || a.reentry != "0" {
		t.Errorf("attempt %+v: want a fresh latchkey id, not reentrant, no request record, its id as letter key, PUBLISH", a)
	}
	h := l.Holds.Current(hold.Any)
	if h == nil || h.Owner != a.id {
		t.Fatalf("current hold %v, want one of owner %s", h, a.id)
	}
	if tok := l.Holds.Token(); tok != 7 {
		t.Errorf("Token = %d, want 7", tok)
	}
	if isClosed(l.Done()) || l.Err() != nil {
		t.Error("Done closed or Err set while held")
	}
	flight.Settle()
	if n := len(f.calls); n != 1 {
		t.Errorf("calls %v, want the attempt alone", f.calls)
	}

	// A second plain Lock on the handle takes another fresh id.
	mustLock(t, l, context.Background())
	if at := f.ops("attempt"); at[1].id == a.id {
		t.Error("two plain Locks of one handle share an owner id")
	}
}

func TestLock_owner(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	ctx := latchkey.WithOwner(context.Background())
	id, _ := owner.FromContext(ctx)
	mustLock(t, l, ctx)
	f.attempt = func(n int, w *lockcore.Waiter) (lockcore.Attempt, error) {
		return lockcore.Attempt{OK: true, Token: 9, Holds: 2}, nil
	}
	mustLock(t, l, ctx)

	at := f.ops("attempt")
	if len(at) != 2 {
		t.Fatalf("%d attempts, want 2", len(at))
	}
	for i, a := range at {
		if a.id != id || !a.reentrant || a.req == "" || !strings.HasPrefix(a.key, id+"/") {
			t.Errorf("attempt %d %+v: want owner %s, reentrant, a request record, a letter key <owner>/<call>", i, a, id)
		}
	}
	if at[0].req == at[1].req || at[0].key == at[1].key {
		t.Error("two Lock calls share a request record or a letter key")
	}
	if at[0].reentry != "1" || at[1].reentry != "2" {
		t.Errorf("Reentry flags %q, %q; want 1 then 2 (holding through the handle)", at[0].reentry, at[1].reentry)
	}
	h := l.Holds.Get(id)
	if h == nil || l.Holds.Token() != 9 {
		t.Fatalf("hold %v, token %d; want the owner's, 9", h, l.Holds.Token())
	}
	// Two counts: the first Unlock leaves it held.
	f.release = func(string, bool) rt.Reply { return reply(0, nil) }
	if err := l.Unlock(ctx); err != nil || isClosed(l.Done()) {
		t.Fatalf("first Unlock = %v, Done closed %v", err, isClosed(l.Done()))
	}
	f.release = nil
	if err := l.Unlock(ctx); err != nil || !isClosed(l.Done()) {
		t.Fatalf("second Unlock = %v, Done closed %v", err, isClosed(l.Done()))
	}
}

func TestLock_refusedThenGranted(t *testing.T) {
	f := &fake{attempt: func(n int, w *lockcore.Waiter) (lockcore.Attempt, error) {
		if n == 1 {
			return lockcore.Attempt{Retry: time.Minute}, nil
		}
		return lockcore.Attempt{OK: true, Token: 11, Holds: 1}, nil
	}}
	l, _ := newLock(t, f)
	mustLock(t, l, context.Background())
	// The second attempt follows the subscription at once.
	at := f.ops("attempt")
	if len(at) != 2 || at[0].id != at[1].id {
		t.Fatalf("attempts %v: want two, for one id", at)
	}
	if h := l.Holds.Current(hold.Any); h == nil || h.Owner != at[0].id || l.Holds.Token() != 11 {
		t.Error("the hold is not the granting attempt's")
	}
	flight.Settle()
	if len(f.ops("dequeue"))+len(f.ops("release")) != 0 {
		t.Errorf("a successful Lock cleaned up: %v", f.calls)
	}
}

// TryLock's one attempt leaves no trace: nothing to dequeue or release.
func TestLock_tryRefused(t *testing.T) {
	f := &fake{attempt: func(int, *lockcore.Waiter) (lockcore.Attempt, error) { return refuse, nil }}
	l, _ := newLock(t, f)
	ok, err := l.Lock(context.Background(), 0)
	if ok || err != nil {
		t.Fatalf("Lock(0) = %v, %v; want false, nil", ok, err)
	}
	flight.Settle()
	if at := f.ops("attempt"); len(at) != 1 || !at[0].try {
		t.Errorf("attempts %v: want one, marked Try", at)
	}
	if len(f.calls) != 1 {
		t.Errorf("calls %v: want the attempt alone", f.calls)
	}
}

// A wait budget that runs out with Redis answering leaves the queue before
// Lock returns.
func TestLock_budgetRunsOut(t *testing.T) {
	f := &fake{attempt: func(int, *lockcore.Waiter) (lockcore.Attempt, error) {
		return lockcore.Attempt{Retry: 5 * time.Millisecond}, nil
	}}
	l, _ := newLock(t, f)
	ok, err := l.Lock(context.Background(), 50*time.Millisecond)
	if ok || err != nil {
		t.Fatalf("Lock = %v, %v; want false, nil", ok, err)
	}
	if dq := f.ops("dequeue"); len(dq) != 1 || dq[0].id != f.ops("attempt")[0].id {
		t.Errorf("dequeues when Lock returned: %v, want one of the waiter", dq)
	}
	flight.Settle()
	if n := len(f.ops("release")) + len(f.ops("resolve")); n != 0 {
		t.Errorf("every attempt was answered, yet %d releases or resolves", n)
	}
	if !isClosed(l.Done()) {
		t.Error("a handle that never held has an open Done")
	}
}

// errLost is an error that leaves an attempt's fate unknown, and that a
// wait rides out.
var errLost = fmt.Errorf("read reply: %w", io.ErrUnexpectedEOF)

// giveUp locks l with ctx while every attempt fails without an answer,
// until a ctx deadline, and checks that Lock returned with it while the
// clean-up waits for f.gate; it opens the gate and waits for the clean-up.
func giveUp(t *testing.T, l *lockcore.Lock, f *fake, ctx context.Context) {
	t.Helper()
	f.gate = make(chan struct{})
	f.attempt = func(int, *lockcore.Waiter) (lockcore.Attempt, error) { return lockcore.Attempt{}, errLost }
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	ok, err := l.Lock(ctx, -1)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock = %v, %v; want false, DeadlineExceeded", ok, err)
	}
	// The clean-up waits at the gate, its last step, off the caller's
	// path: the caller returned before it ended.
	if n := len(f.ops("dequeue")); n != 0 {
		t.Fatalf("%d dequeues before the gate opened: the clean-up ran on the caller's path", n)
	}
	close(f.gate)
	flight.Settle()
	f.gate = nil
}

// A plain Lock whose attempts went unanswered releases its fresh id when
// it gives up: a grant that landed is undone.
func TestLock_abandon_plain(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	giveUp(t, l, f, context.Background())
	at := f.ops("attempt")
	dq, rel := f.ops("dequeue"), f.ops("release")
	if len(dq) != 1 || dq[0].id != at[0].id {
		t.Errorf("dequeues %v, want one of %s", dq, at[0].id)
	}
	if len(rel) != 1 || rel[0].id != at[0].id || rel[0].reentrant || rel[0].req == "" || rel[0].ctxErr != nil {
		t.Errorf("releases %v: want one of the fresh id %s, plain, recorded, with a live ctx", rel, at[0].id)
	}
	if len(f.ops("resolve")) != 0 {
		t.Error("a plain Lock resolved its request")
	}
	if !isClosed(l.Done()) || l.Holds.Get(at[0].id) != nil {
		t.Error("an abandoned Lock left a hold on the books")
	}
}

// An owner's Lock whose attempts went unanswered asks its request record
// whether it took the lock, and gives back what it took.
func TestLock_abandon_owner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		acquired bool
		err      error
		releases int
	}{
		{"acquired", true, nil, 1},
		{"not acquired", false, nil, 0},
		{"unknown", false, errLost, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{resolve: func() (bool, error) { return tc.acquired, tc.err }}
			l, _ := newLock(t, f)
			ctx := latchkey.WithOwner(context.Background())
			id, _ := owner.FromContext(ctx)
			giveUp(t, l, f, ctx)
			last := f.ops("attempt")
			rs := f.ops("resolve")
			if len(rs) != 1 || rs[0].id != id || rs[0].req != last[len(last)-1].req || rs[0].ctxErr != nil {
				t.Fatalf("resolves %v: want one for owner %s and the attempts' request, with a live ctx", rs, id)
			}
			if len(f.ops("dequeue")) != 1 {
				t.Error("no dequeue")
			}
			rel := f.ops("release")
			if len(rel) != tc.releases {
				t.Fatalf("releases %v, want %d", rel, tc.releases)
			}
			for _, r := range rel {
				if r.id != id || !r.reentrant {
					t.Errorf("release %v, want one by owner %s", r, id)
				}
			}
		})
	}
}

// A re-entry whose outcome stays unknown marks the hold uncertain: an
// unlock that fails without an answer then keeps it, since the server may
// count it still.
func TestLock_abandon_reentryUncertain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		resolve error
		kept    bool
	}{
		{"resolved", nil, false},
		{"unresolved", errLost, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{resolve: func() (bool, error) { return false, tc.resolve }}
			l, _ := newLock(t, f)
			ctx := latchkey.WithOwner(context.Background())
			mustLock(t, l, ctx)
			giveUp(t, l, f, ctx)
			if rs := f.ops("resolve"); len(rs) != 1 || rs[0].reentry != "2" {
				t.Fatalf("resolves %v: want one, of a re-entry", rs)
			}
			f.release = func(string, bool) rt.Reply { return reply(0, errBoom) }
			if err := l.Unlock(ctx); err == nil || errors.Is(err, latchkey.ErrNotHeld) {
				t.Fatalf("Unlock = %v, want the release's error", err)
			}
			if kept := !isClosed(l.Done()); kept != tc.kept {
				t.Errorf("after a failed unlock of the last count: hold kept %v, want %v", kept, tc.kept)
			}
		})
	}
}

// A grant that no replica acknowledged is released at once, and the call
// fails with ErrNotReplicated.
func TestLock_notReplicated(t *testing.T) {
	for _, reentrant := range []bool{false, true} {
		t.Run(fmt.Sprint("reentrant=", reentrant), func(t *testing.T) {
			f := &fake{attempt: func(int, *lockcore.Waiter) (lockcore.Attempt, error) {
				r := reply(1, nil)
				r.Replicas, r.Acked = 2, 0
				return lockcore.Attempt{OK: true, Token: 3, Holds: 1, Reply: r}, nil
			}}
			l, _ := newLock(t, f)
			ctx := context.Background()
			if reentrant {
				ctx = latchkey.WithOwner(ctx)
			}
			ok, err := l.Lock(ctx, -1)
			if ok || !errors.Is(err, latchkey.ErrNotReplicated) {
				t.Fatalf("Lock = %v, %v; want false, ErrNotReplicated", ok, err)
			}
			at := f.ops("attempt")
			rel := f.ops("release")
			if len(at) != 1 || len(rel) != 1 || rel[0].id != at[0].id || rel[0].reentrant != reentrant {
				t.Fatalf("attempts %v, releases %v when Lock returned: want the grant released at once", at, rel)
			}
			flight.Settle()
			if n := len(f.ops("release")); n != 1 {
				t.Errorf("%d releases after the clean-up, want 1", n)
			}
			if l.Holds.Current(hold.Any) != nil || !isClosed(l.Done()) {
				t.Error("an unreplicated grant was recorded as a hold")
			}
		})
	}

	// One acknowledgement is enough.
	f := &fake{attempt: func(int, *lockcore.Waiter) (lockcore.Attempt, error) {
		r := reply(1, nil)
		r.Replicas, r.Acked = 2, 1
		return lockcore.Attempt{OK: true, Token: 3, Holds: 1, Reply: r}, nil
	}}
	l, _ := newLock(t, f)
	mustLock(t, l, context.Background())
	if len(f.ops("release")) != 0 {
		t.Error("a replicated grant was released")
	}
}

// A re-entry that the server counted on top of a hold declared lost while
// it was on its way gives the lost counts back: the caller holds once.
func TestLock_reentryAfterLoss(t *testing.T) {
	for _, tc := range []struct {
		name     string
		holds    int64
		lose     bool
		releases int
	}{
		{"not lost", 2, false, 0},
		{"lost, one stale count", 2, true, 1},
		{"lost, two stale counts", 3, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			l, _ := newLock(t, f)
			ctx := latchkey.WithOwner(context.Background())
			id, _ := owner.FromContext(ctx)
			mustLock(t, l, ctx)
			f.attempt = func(n int, w *lockcore.Waiter) (lockcore.Attempt, error) {
				if tc.lose {
					l.Holds.Lose(l.Holds.Get(id), fmt.Errorf("%w: test", latchkey.ErrLost))
				}
				return lockcore.Attempt{OK: true, Token: 5, Holds: tc.holds}, nil
			}
			mustLock(t, l, ctx)
			rel := f.ops("release")
			if len(rel) != tc.releases {
				t.Fatalf("releases %v, want %d", rel, tc.releases)
			}
			for _, r := range rel {
				if r.id != id || !r.reentrant {
					t.Errorf("release %v, want one by owner %s", r, id)
				}
			}
			if tc.lose {
				// The handle counts one hold: one Unlock ends it.
				if err := l.Unlock(ctx); err != nil || !isClosed(l.Done()) {
					t.Errorf("Unlock = %v, Done closed %v; want nil, true", err, isClosed(l.Done()))
				}
			}
		})
	}
}

func TestLockContext(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	ctx, err := l.LockContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("LockContext's ctx done while held")
	}
	if err := l.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	if context.Cause(ctx) != context.Canceled {
		t.Errorf("after Unlock: cause %v, want Canceled", context.Cause(ctx))
	}

	ctx, err = l.LockContext(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Holds.NotHeld(f.ops("attempt")[1].id, "test")
	if !errors.Is(context.Cause(ctx), latchkey.ErrLost) {
		t.Errorf("after loss: cause %v, want ErrLost", context.Cause(ctx))
	}

	f.attempt = func(int, *lockcore.Waiter) (lockcore.Attempt, error) {
		return lockcore.Attempt{}, errors.New("ERR boom")
	}
	if ctx, err := l.LockContext(context.Background()); ctx != nil || err == nil {
		t.Errorf("LockContext = %v, %v; want nil and the error", ctx, err)
	}
	flight.Settle()
}

func TestLocker(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	lk := l.Locker()
	lk.Lock()
	if len(f.ops("release")) != 0 {
		t.Errorf("released while held: %v", f.calls)
	}
	lk.Unlock()
	if len(f.ops("attempt")) != 1 || len(f.ops("release")) != 1 {
		t.Fatalf("calls %v: want an attempt and a release", f.calls)
	}

	panics := func(name string, fn func(), want error) {
		t.Helper()
		defer func() {
			r := recover()
			s, _ := r.(string)
			if !strings.HasPrefix(s, "testlock: Locker: ") || !strings.Contains(s, want.Error()) {
				t.Errorf("%s: panic(%v), want a panic naming the package and %q", name, r, want)
			}
		}()
		fn()
	}
	panics("Unlock of a free lock", lk.Unlock, latchkey.ErrNotHeld)
	boom := errBoom
	f.attempt = func(int, *lockcore.Waiter) (lockcore.Attempt, error) { return lockcore.Attempt{}, boom }
	panics("Lock that fails", lk.Lock, boom)
	flight.Settle()
}
