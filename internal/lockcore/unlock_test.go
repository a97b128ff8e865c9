package lockcore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
)

func TestUnlock_plain(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	ctx := context.Background()
	mustLock(t, l, ctx)
	id := f.ops("attempt")[0].id
	done := l.Done()

	// Released (1).
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock = %v", err)
	}
	rel := f.ops("release")
	if len(rel) != 1 || rel[0].id != id || rel[0].reentrant || rel[0].req == "" {
		t.Fatalf("releases %v: want one of the hold's id %s, plain, recorded, with PUBLISH", rel, id)
	}
	if !isClosed(done) || l.Err() != nil {
		t.Errorf("after Unlock: Done closed %v, Err %v; want closed, nil", isClosed(done), l.Err())
	}
	// Nothing left to unlock: nothing is sent.
	if err := l.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock of a free handle = %v, want ErrNotHeld", err)
	}
	if n := len(f.ops("release")); n != 1 {
		t.Errorf("%d releases, want 1: an Unlock without a hold sent one", n)
	}
}

func TestUnlock_answers(t *testing.T) {
	notReplicated := func(v int64) rt.Reply {
		r := reply(v, nil)
		r.Replicas, r.Acked = 1, 0
		return r
	}
	for _, tc := range []struct {
		name    string
		reply   rt.Reply
		wantErr error // nil: no error
		ended   bool
		lost    bool
	}{
		{"released", reply(1, nil), nil, true, false},
		{"holds remain", reply(0, nil), nil, false, false},
		{"not held", reply(-1, nil), latchkey.ErrNotHeld, true, true},
		{"released, not replicated", notReplicated(1), latchkey.ErrNotReplicated, true, false},
		{"failed", reply(0, errBoom), errBoom, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{release: func(string, bool) rt.Reply { return tc.reply }}
			l, _ := newLock(t, f)
			mustLock(t, l, context.Background())
			err := l.Unlock(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Unlock = %v, want %v", err, tc.wantErr)
			}
			if ended := isClosed(l.Done()); ended != tc.ended {
				t.Errorf("hold ended %v, want %v", ended, tc.ended)
			}
			if lost := errors.Is(l.Err(), latchkey.ErrLost); lost != tc.lost {
				t.Errorf("Err = %v, lost %v, want %v", l.Err(), lost, tc.lost)
			}
		})
	}
}

// A release that left the hold held unclaims it: the next Unlock picks it
// again.
func TestUnlock_holdsRemain(t *testing.T) {
	f := &fake{release: func(string, bool) rt.Reply { return reply(0, nil) }}
	l, _ := newLock(t, f)
	mustLock(t, l, context.Background())
	for range 2 {
		if err := l.Unlock(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	rel := f.ops("release")
	if len(rel) != 2 || rel[0].id != rel[1].id || rel[0].req == rel[1].req {
		t.Errorf("releases %v: want two of the same hold, each its own request", rel)
	}
}

// Concurrent Unlocks of a handle's plain holds each release another: the
// newest first, and the one being released is skipped.
func TestUnlock_picksNewestPlain(t *testing.T) {
	gate := make(chan struct{})
	f := &fake{}
	l, _ := newLock(t, f)
	mustLock(t, l, context.Background())
	mustLock(t, l, context.Background())
	at := f.ops("attempt")
	older, newer := at[0].id, at[1].id
	f.release = func(id string, _ bool) rt.Reply {
		if id == newer {
			<-gate
		}
		return reply(1, nil)
	}
	first := make(chan error, 1)
	go func() { first <- l.Unlock(context.Background()) }()
	eventually(t, "the first Unlock's release", func() bool { return len(f.ops("release")) == 1 })
	if got := f.ops("release")[0].id; got != newer {
		t.Errorf("the first Unlock released %s, want the newest hold %s", got, newer)
	}
	if err := l.Unlock(context.Background()); err != nil {
		t.Errorf("second Unlock = %v", err)
	}
	if rel := f.ops("release"); len(rel) != 2 || rel[1].id != older {
		t.Errorf("releases %v: the second Unlock should release %s", rel, older)
	}
	close(gate)
	if err := <-first; err != nil {
		t.Errorf("first Unlock = %v", err)
	}
	if !isClosed(l.Done()) || l.Holds.Current(hold.Any) != nil {
		t.Error("holds left after both Unlocks")
	}
}

// An Unlock whose ctx ended returns at once, with nil or an error matching
// ctx.Err(), and still sends the release, in the background: a clean-up
// call never strands a hold.
func TestUnlock_endedCtx(t *testing.T) {
	for _, reentrant := range []bool{false, true} {
		t.Run(fmt.Sprint("reentrant=", reentrant), func(t *testing.T) {
			f := &fake{}
			l, _ := newLock(t, f)
			base := context.Background()
			if reentrant {
				base = latchkey.WithOwner(base)
			}
			mustLock(t, l, base)
			ctx, cancel := context.WithCancel(base)
			cancel()
			if err := l.Unlock(ctx); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("Unlock with an ended ctx = %v", err)
			}
			flight.Settle()
			rel := f.ops("release")
			if len(rel) != 1 || rel[0].ctxErr != nil || rel[0].reentrant != reentrant {
				t.Fatalf("releases %v: want one, sent with a live ctx", rel)
			}
			if !isClosed(l.Done()) {
				t.Error("the hold is still on the books")
			}

			mustLock(t, l, base)
			ctx, cancel = context.WithDeadline(base, time.Now().Add(-time.Second))
			defer cancel()
			if err := l.Unlock(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Unlock past its deadline = %v", err)
			}
			flight.Settle()
			if rel := f.ops("release"); len(rel) != 2 || rel[1].ctxErr != nil {
				t.Fatalf("releases %v: want a second, sent with a live ctx", rel)
			}
		})
	}
}

// An owner whose hold the handle saw lost is told so by its Unlock, which
// still releases what is left on the server.
func TestUnlock_lostOwner(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f, lockopt.Common{Fixed: 30 * time.Millisecond})
	ctx := latchkey.WithOwner(context.Background())
	id, _ := owner.FromContext(ctx)
	mustLock(t, l, ctx)
	select {
	case <-l.Done():
	case <-time.After(bound):
		t.Fatalf("hold with a 30ms lease not lost within %v", bound)
	}
	if !errors.Is(l.Err(), latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", l.Err())
	}
	if err := l.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock after loss = %v, want ErrNotHeld", err)
	}
	if rel := f.ops("release"); len(rel) != 1 || rel[0].id != id || !rel[0].reentrant {
		t.Errorf("releases %v: want the remnant released by owner %s", rel, id)
	}
}

// Plain holds lost in numbers (fixed leases left to run out) do not make a
// long-lived handle forget an owner's loss.
func TestUnlock_lostOwnerAfterManyPlainLosses(t *testing.T) {
	f := &fake{}
	l, _ := newLock(t, f)
	for range 1100 {
		mustLock(t, l, context.Background())
		id, _ := l.Holds.CurrentPlain(hold.Any)
		l.Holds.NotHeld(id, "lease ran out")
	}
	ctx := latchkey.WithOwner(context.Background())
	id, _ := owner.FromContext(ctx)
	mustLock(t, l, ctx)
	l.Holds.NotHeld(id, "renewal found it gone")
	if err := l.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock after loss = %v, want ErrNotHeld", err)
	}
}

func TestForceUnlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply rt.Reply
		held  bool
		err   bool
	}{
		{"held", reply(1, nil), true, false},
		{"free", reply(0, nil), false, false},
		{"error", reply(0, errBoom), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{force: tc.reply}
			l, _ := newLock(t, f)
			held, err := l.ForceUnlock(context.Background())
			if held != tc.held || (err != nil) != tc.err {
				t.Errorf("ForceUnlock = %v, %v; want %v, error %v", held, err, tc.held, tc.err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // sent all the same, in the background
			if _, err := l.ForceUnlock(ctx); err != nil && !tc.err && !errors.Is(err, context.Canceled) {
				t.Errorf("ForceUnlock with an ended ctx = %v, want nil or context.Canceled", err)
			}
			flight.Settle()
			fs := f.ops("force")
			if len(fs) != 2 || fs[1].ctxErr != nil {
				t.Errorf("forces %v: want two, the second with a live ctx and PUBLISH", fs)
			}
		})
	}
}

// Unlock by an owner that holds through another handle, or nothing at all,
// is the server's to answer.
func TestUnlock_ownerNotOnBooks(t *testing.T) {
	f := &fake{release: func(string, bool) rt.Reply { return reply(-1, nil) }}
	l, _ := newLock(t, f)
	ctx := latchkey.WithOwner(context.Background())
	if err := l.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock = %v, want ErrNotHeld", err)
	}
	if n := len(f.ops("release")); n != 1 {
		t.Errorf("%d releases, want 1", n)
	}
	f.release = nil
	if err := l.Unlock(ctx); err != nil {
		t.Errorf("Unlock of a hold through another handle = %v", err)
	}
}

var _ lockcore.Protocol = (*fake)(nil)

// errBoom is an error that a release cannot ride out.
var errBoom = errors.New("ERR boom")
