package hold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/redis/go-redis/v9"
)

const what = "mutex: orders"

var t0 = time.Unix(1_700_000_000, 0)

func TestTable_neverHeld(t *testing.T) {
	tb := New("mutex", "orders")
	if !isClosed(tb.Done(Any)) || !isClosed(tb.Done(0)) {
		t.Error("Done of a handle that never held is open")
	}
	if err := tb.Err(Any); err != nil {
		t.Errorf("Err = %v, want nil", err)
	}
	if tok := tb.Token(); tok != 0 {
		t.Errorf("Token = %d, want 0", tok)
	}
	if h := tb.Current(Any); h != nil {
		t.Errorf("Current = %v, want nil", h)
	}
	if _, ok := tb.ClaimPlain(Any); ok {
		t.Error("ClaimPlain found a hold")
	}
	if _, ok := tb.CurrentPlain(Any); ok {
		t.Error("CurrentPlain found a hold")
	}
	if tb.Again("o", t0) {
		t.Error("Again counted a hold that is not there")
	}
	if h, last := tb.Detach("o"); h != nil || last {
		t.Errorf("Detach = %v, %v; want nil, false", h, last)
	}
	// Records of holds that are not there change nothing, and do not panic.
	tb.Decremented("o")
	tb.Released("o")
	tb.NotHeld("o", "why")
	tb.Abandoned("o")
	tb.Uncertain("o")
	if tb.WasLost("o") {
		t.Error("NotHeld of an absent hold made it count as lost")
	}
}

func TestTable_Acquired(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	h := tb.Acquired("o1", "o1", 0, false, 7, t0, k)
	if h.Owner != "o1" || count(tb, h) != 1 {
		t.Errorf("hold: owner %q count %d, want o1, 1", h.Owner, count(tb, h))
	}
	if tb.Get("o1") != h || tb.Current(0) != h || tb.Current(Any) != h {
		t.Error("Get or Current does not return the new hold")
	}
	if tok := tb.Token(); tok != 7 {
		t.Errorf("Token = %d, want 7", tok)
	}
	done := tb.Done(Any)
	if isClosed(done) || tb.Done(0) != done {
		t.Error("Done of a live hold is closed, or differs by class")
	}
	if err := tb.Err(Any); err != nil {
		t.Errorf("Err of a live hold = %v", err)
	}
	kp := k.only(t)
	if kp.id != "o1" || !kp.started.Equal(t0) {
		t.Errorf("Keep(%q, %v), want Keep(o1, %v)", kp.id, kp.started, t0)
	}
	if h.Keeping() != kp {
		t.Error("Keeping does not return what Keep returned")
	}

	// A re-entry counts on the same hold and tells its keeping.
	t1 := t0.Add(time.Second)
	if h2 := tb.Acquired("o1", "o1", 0, false, 8, t1, k); h2 != h {
		t.Fatal("re-entry made a new hold")
	}
	if n := count(tb, h); n != 2 {
		t.Errorf("count after re-entry = %d, want 2", n)
	}
	if tok := tb.Token(); tok != 8 {
		t.Errorf("Token after re-entry = %d, want the latest, 8", tok)
	}
	agains, stops := kp.counts()
	if len(agains) != 1 || !agains[0].Equal(t1) || stops != 0 {
		t.Errorf("keeping: Again %v, Stop %d times; want Again(%v) once, no Stop", agains, stops, t1)
	}
	if len(k.keepings()) != 1 {
		t.Error("re-entry called Keep again")
	}
	if tb.Done(Any) != done {
		t.Error("re-entry changed the Done channel")
	}
}

// Done, Err, Current and Token follow the newest hold of a class, and move
// on to the newest one still live when it ends.
func TestTable_currentMovesOn(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	r := tb.Acquired("r", "r", 0, false, 1, t0, k)
	w := tb.Acquired("w", "w", 1, false, 2, t0, k)
	if tb.Current(0) != r || tb.Current(1) != w || tb.Current(Any) != w {
		t.Fatal("Current does not follow each class's newest hold")
	}
	if tb.Done(0) == tb.Done(1) {
		t.Fatal("two holds share a Done channel")
	}
	wDone := tb.Done(1)
	tb.Released("w")
	if !isClosed(wDone) {
		t.Error("Done of a released hold is open")
	}
	if tb.Current(Any) != r || tb.Done(Any) != tb.Done(0) || isClosed(tb.Done(Any)) {
		t.Error("Done(Any) did not move on to the hold still live")
	}
	if tok := tb.Token(); tok != 1 {
		t.Errorf("Token = %d, want the live hold's, 1", tok)
	}
	// No live hold of class 1 is left: Done(1) and Err(1) go on telling
	// how the last one ended.
	if !isClosed(tb.Done(1)) || tb.Err(1) != nil || tb.Current(1) != nil {
		t.Error("class 1: want a closed Done, nil Err and no current hold")
	}

	tb.NotHeld("r", "gone")
	if !isClosed(tb.Done(Any)) || !errors.Is(tb.Err(Any), latchkey.ErrLost) {
		t.Errorf("after the last hold was lost: Done closed %v, Err %v", isClosed(tb.Done(Any)), tb.Err(Any))
	}
	if tb.Token() != 0 || tb.Current(Any) != nil {
		t.Error("Token or Current report an ended hold")
	}
	// A new hold starts afresh.
	tb.Acquired("r", "r", 0, false, 3, t0, k)
	if isClosed(tb.Done(Any)) || tb.Err(Any) != nil {
		t.Error("a new hold reports the old one's end")
	}
}

func TestTable_ClaimPlain(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("p1", "p1", 0, true, 0, t0, k)
	tb.Acquired("o", "o", 0, false, 0, t0, k) // an owner's: never claimed
	tb.Acquired("p2", "p2", 0, true, 0, t0, k)

	for _, want := range []string{"p2", "p1"} {
		if id, ok := tb.ClaimPlain(Any); !ok || id != want {
			t.Fatalf("ClaimPlain = %q, %v; want %q (the newest unclaimed plain hold)", id, ok, want)
		}
	}
	if id, ok := tb.ClaimPlain(Any); ok {
		t.Fatalf("ClaimPlain = %q with every plain hold claimed", id)
	}
	// CurrentPlain reports the newest plain hold, claimed or not.
	if id, ok := tb.CurrentPlain(Any); !ok || id != "p2" {
		t.Errorf("CurrentPlain = %q, %v; want p2", id, ok)
	}
	// A release that left the hold held (Decremented) unclaims it.
	tb.Decremented("p1")
	if id, ok := tb.ClaimPlain(Any); !ok || id != "p1" {
		t.Errorf("ClaimPlain after Decremented = %q, %v; want p1", id, ok)
	}
	// A release whose outcome is unknown ends it (count 1).
	tb.Abandoned("p2")
	if tb.Get("p2") != nil {
		t.Error("Abandoned left a plain hold of count 1 on the books")
	}
	if id, ok := tb.CurrentPlain(Any); !ok || id != "p1" {
		t.Errorf("CurrentPlain = %q, %v; want p1", id, ok)
	}
}

func TestTable_ClaimPlain_class(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("r", "r", 0, true, 0, t0, k)
	tb.Acquired("w", "w", 1, true, 0, t0, k)
	if id, ok := tb.ClaimPlain(0); !ok || id != "r" {
		t.Errorf("ClaimPlain(0) = %q, %v; want r", id, ok)
	}
	if id, ok := tb.ClaimPlain(0); ok {
		t.Errorf("ClaimPlain(0) = %q: took a hold of class 1", id)
	}
	if id, ok := tb.CurrentPlain(1); !ok || id != "w" {
		t.Errorf("CurrentPlain(1) = %q, %v; want w", id, ok)
	}
}

// Goroutines that unlock plain holds at once each claim a different one.
func TestTable_ClaimPlain_concurrent(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	var (
		claimed sync.Map
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []string
	)
	const goroutines, rounds = 8, 200
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := fmt.Sprintf("g%d-%d", g, i)
				tb.Acquired(id, id, 0, true, 0, t0, k)
				got, ok := tb.ClaimPlain(Any)
				if !ok {
					mu.Lock()
					errs = append(errs, "ClaimPlain found nothing with a hold of its own live")
					mu.Unlock()
					continue
				}
				if _, dup := claimed.LoadOrStore(got, true); dup {
					mu.Lock()
					errs = append(errs, "two unlocks claimed "+got)
					mu.Unlock()
				}
				tb.Released(got)
				claimed.Delete(got)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d violations, first: %s", len(errs), errs[0])
	}
	if _, ok := tb.CurrentPlain(Any); ok {
		t.Error("holds left on the books")
	}
}

func TestTable_Decremented(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	var h *Hold
	for range 3 {
		h = tb.Acquired("o", "o", 0, false, 0, t0, k)
	}
	for _, want := range []int{2, 1, 1, 1} {
		tb.Decremented("o")
		if n := count(tb, h); n != want {
			t.Fatalf("count = %d, want %d (never below 1)", n, want)
		}
	}
	if tb.Get("o") != h || isClosed(tb.Done(Any)) {
		t.Error("Decremented ended the hold")
	}
	if _, stops := k.only(t).counts(); stops != 0 {
		t.Error("Decremented stopped the keeping")
	}
}

func TestTable_Released(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("o", "o", 0, false, 5, t0, k)
	tb.Acquired("o", "o", 0, false, 5, t0, k) // a count more: Released ends all
	done := tb.Done(Any)
	tb.Released("o")
	if !isClosed(done) {
		t.Error("Done open after Released")
	}
	if err := tb.Err(Any); err != nil {
		t.Errorf("Err after Released = %v, want nil", err)
	}
	if tb.Get("o") != nil || tb.Current(Any) != nil || tb.Token() != 0 {
		t.Error("a released hold is still on the books")
	}
	if _, stops := k.only(t).counts(); stops != 1 {
		t.Errorf("keeping stopped %d times, want 1", stops)
	}
	if tb.WasLost("o") {
		t.Error("a released hold counts as lost")
	}
}

func TestTable_NotHeld(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("o", "o", 0, false, 0, t0, k)
	done := tb.Done(Any)
	tb.NotHeld("o", "found not held on unlock")
	if !isClosed(done) {
		t.Error("Done open after NotHeld")
	}
	err := tb.Err(Any)
	if !errors.Is(err, latchkey.ErrLost) {
		t.Fatalf("Err = %v, want ErrLost", err)
	}
	if !strings.HasPrefix(err.Error(), what+": ") || !strings.Contains(err.Error(), "found not held on unlock") {
		t.Errorf("Err = %q: want the handle and the reason in it", err)
	}
	if _, stops := k.only(t).counts(); stops != 1 {
		t.Errorf("keeping stopped %d times, want 1", stops)
	}
	if !tb.WasLost("o") {
		t.Error("WasLost false after NotHeld")
	}
	tb.Released("o") // too late: the hold is over
	if !errors.Is(tb.Err(Any), latchkey.ErrLost) {
		t.Error("Released after NotHeld changed Err")
	}
}

// A Keeper's loss ends its hold; a loss declared for a hold that already
// ended touches nothing, even a newer hold under the same key.
func TestTable_keeperLoss(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("o", "o", 0, false, 0, t0, k)
	first := k.only(t)
	first.lost(fmt.Errorf("%w: renewal found it gone", latchkey.ErrLost))
	err := tb.Err(Any)
	if !errors.Is(err, latchkey.ErrLost) || !strings.HasPrefix(err.Error(), what+": ") {
		t.Fatalf("Err = %v, want ErrLost prefixed with %q", err, what)
	}
	if !isClosed(tb.Done(Any)) || tb.Get("o") != nil {
		t.Error("a lost hold is still on the books")
	}
	if _, stops := first.counts(); stops != 1 {
		t.Errorf("keeping stopped %d times, want 1", stops)
	}

	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	if tb.WasLost("o") {
		t.Error("WasLost true after a new acquisition")
	}
	first.lost(fmt.Errorf("%w: late", latchkey.ErrLost)) // the old hold's keeper, late
	if tb.Get("o") != h || isClosed(tb.Done(Any)) {
		t.Error("a late loss of the old hold ended the new one")
	}
}

func TestTable_Lose_stale(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	old := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Released("o")
	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Lose(old, latchkey.ErrLost)
	if tb.Get("o") != h || isClosed(tb.Done(Any)) || tb.Err(Any) != nil {
		t.Error("Lose of an ended hold ended the live one")
	}
	tb.Lose(h, latchkey.ErrLost)
	if !errors.Is(tb.Err(Any), latchkey.ErrLost) || !tb.WasLost("o") {
		t.Error("Lose of the live hold did not end it as lost")
	}
}

// While an unlock of a hold is on its way, a loss found on the server
// waits for the unlock's answer (it may be the unlock's own release), but
// an expired validity ends the hold at once.
func TestTable_Lose_whileReleasing(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("p", "p", 0, true, 0, t0, k)
	if _, ok := tb.ClaimPlain(Any); !ok {
		t.Fatal("ClaimPlain found no hold")
	}
	kept := k.only(t)
	kept.lost(fmt.Errorf("%w: found gone on renewal", latchkey.ErrLost))
	if tb.Get("p") == nil || isClosed(tb.Done(Any)) {
		t.Fatal("a hold found gone while its unlock was on its way ended before the unlock's answer")
	}
	kept.lost(fmt.Errorf("%w: %w", latchkey.ErrLost, lease.ErrExpired))
	if tb.Get("p") != nil || !isClosed(tb.Done(Any)) {
		t.Fatal("a hold whose validity ran out while its unlock was on its way did not end")
	}
	if err := tb.Err(Any); !errors.Is(err, latchkey.ErrLost) || !errors.Is(err, lease.ErrExpired) {
		t.Errorf("Err = %v, want ErrLost and lease.ErrExpired", err)
	}
	tb.Released("p") // the unlock's answer, after the loss: changes nothing
	if !errors.Is(tb.Err(Any), latchkey.ErrLost) {
		t.Errorf("Err after the late release = %v, want the loss", tb.Err(Any))
	}
}

func TestTable_Abandoned(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Abandoned("o")
	if n := count(tb, h); n != 1 || tb.Get("o") != h {
		t.Fatalf("after one Abandoned of two counts: count %d, on the books %v", n, tb.Get("o") == h)
	}
	tb.Abandoned("o")
	if tb.Get("o") != nil || !isClosed(tb.Done(Any)) {
		t.Fatal("Abandoned of the last count did not end the hold")
	}
	if err := tb.Err(Any); err != nil {
		t.Errorf("Err = %v: an abandoned unlock counts as a release", err)
	}
	if _, stops := k.only(t).counts(); stops != 1 {
		t.Errorf("keeping stopped %d times, want 1", stops)
	}
	if tb.WasLost("o") {
		t.Error("WasLost true after Abandoned")
	}
}

// An uncertain hold (the server may count more) outlives an abandoned
// unlock of its last count here: only its renewal can tell.
func TestTable_Abandoned_uncertain(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Uncertain("o")
	tb.Abandoned("o")
	if tb.Get("o") != h || isClosed(tb.Done(Any)) {
		t.Fatal("Abandoned ended an uncertain hold")
	}
	if n := count(tb, h); n != 1 {
		t.Errorf("count = %d, want 1", n)
	}
	if _, stops := k.only(t).counts(); stops != 0 {
		t.Error("Abandoned stopped an uncertain hold's keeping")
	}
	tb.Released("o")
	if !isClosed(tb.Done(Any)) {
		t.Error("an uncertain hold did not end on its release")
	}
}

// Abandoned unclaims a plain hold with counts left.
func TestTable_Abandoned_unclaims(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	tb.Acquired("p", "p", 0, true, 0, t0, k)
	tb.Uncertain("p")
	if _, ok := tb.ClaimPlain(Any); !ok {
		t.Fatal("ClaimPlain found nothing")
	}
	tb.Abandoned("p")
	if id, ok := tb.ClaimPlain(Any); !ok || id != "p" {
		t.Errorf("ClaimPlain after Abandoned = %q, %v; want p", id, ok)
	}
}

func TestTable_WasLost_bound(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	for i := range maxLost + 10 {
		id := fmt.Sprint("o", i)
		tb.Acquired(id, id, 0, false, 0, t0, k)
		tb.NotHeld(id, "gone")
	}
	tb.mu.Lock()
	n := len(tb.lost)
	tb.mu.Unlock()
	if n > maxLost {
		t.Errorf("the table remembers %d lost holds, more than maxLost (%d)", n, maxLost)
	}
	if !tb.WasLost("o0") {
		t.Error("WasLost forgot a loss within the bound")
	}
}

// Only an owner's unlock or re-entry asks WasLost; a plain hold's id is
// never held again. Lost plain holds (a fixed lease left to run out) must
// not fill the bounded memory of losses, lest a long-lived handle forget
// its owners' losses.
func TestTable_WasLost_plainDoesNotCrowdOutOwners(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	for i := range maxLost {
		id := fmt.Sprint("p", i)
		tb.Acquired(id, id, 0, true, 0, t0, k)
		tb.NotHeld(id, "lease ran out")
	}
	tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.NotHeld("o", "gone")
	if !tb.WasLost("o") {
		t.Error("an owner's loss was forgotten after many plain holds were lost")
	}
}

func TestTable_Detach_Finish(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Acquired("o", "o", 0, false, 0, t0, k)
	ctx := tb.Context(context.Background(), h)

	if got, last := tb.Detach("o"); got != h || last {
		t.Fatalf("Detach with two counts = %v, %v; want the hold, false", got, last)
	}
	if n := count(tb, h); n != 1 || tb.Get("o") != h {
		t.Fatalf("after the first Detach: count %d, on the books %v", n, tb.Get("o") == h)
	}
	if got, last := tb.Detach("o"); got != h || !last {
		t.Fatalf("Detach of the last count = %v, %v; want the hold, true", got, last)
	}
	if tb.Get("o") != nil || tb.Current(Any) != nil {
		t.Error("a detached hold is still found")
	}
	if _, stops := k.only(t).counts(); stops != 1 {
		t.Errorf("keeping stopped %d times, want 1", stops)
	}
	if isClosed(tb.Done(Any)) || ctx.Err() != nil {
		t.Fatal("Detach ended the hold")
	}
	if _, ok := tb.ClaimPlain(Any); ok {
		t.Error("an unlock found a detached hold")
	}
	tb.Lose(h, latchkey.ErrLost) // off the books: not for the keeper to end
	if isClosed(tb.Done(Any)) {
		t.Fatal("Lose ended a detached hold")
	}

	why := fmt.Errorf("%w: quorum lost", latchkey.ErrLost)
	tb.Finish(h, why)
	if !isClosed(tb.Done(Any)) || tb.Err(Any) != why {
		t.Errorf("after Finish: Done closed %v, Err %v; want closed, %v", isClosed(tb.Done(Any)), tb.Err(Any), why)
	}
	if context.Cause(ctx) != why {
		t.Errorf("Context's cause = %v, want %v", context.Cause(ctx), why)
	}
}

func TestTable_Context(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")

	t.Run("released", func(t *testing.T) {
		tb := New("mutex", "orders")
		h := tb.Acquired("o", "o", 0, false, 0, t0, &fakeKeeper{})
		ctx := tb.Context(parent, h)
		if ctx.Err() != nil || ctx.Value(key{}) != "v" {
			t.Fatal("Context of a live hold is done, or lost the parent's values")
		}
		tb.Released("o")
		if !errors.Is(ctx.Err(), context.Canceled) || context.Cause(ctx) != context.Canceled {
			t.Errorf("after release: Err %v, Cause %v; want Canceled for both", ctx.Err(), context.Cause(ctx))
		}
	})
	t.Run("lost", func(t *testing.T) {
		tb := New("mutex", "orders")
		h := tb.Acquired("o", "o", 0, false, 0, t0, &fakeKeeper{})
		ctx := tb.Context(parent, h)
		tb.NotHeld("o", "gone")
		if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), latchkey.ErrLost) {
			t.Errorf("after loss: Err %v, Cause %v; want Canceled, ErrLost", ctx.Err(), context.Cause(ctx))
		}
	})
	t.Run("ended before", func(t *testing.T) {
		tb := New("mutex", "orders")
		h := tb.Acquired("o", "o", 0, false, 0, t0, &fakeKeeper{})
		tb.NotHeld("o", "gone")
		ctx := tb.Context(parent, h)
		if !errors.Is(context.Cause(ctx), latchkey.ErrLost) {
			t.Errorf("Context of a lost hold: Cause %v, want ErrLost", context.Cause(ctx))
		}
	})
	t.Run("parent ends", func(t *testing.T) {
		tb := New("mutex", "orders")
		h := tb.Acquired("o", "o", 0, false, 0, t0, &fakeKeeper{})
		p, cancel := context.WithCancel(parent)
		ctx := tb.Context(p, h)
		cancel()
		if ctx.Err() == nil {
			t.Error("Context outlived its parent")
		}
		if isClosed(tb.Done(Any)) {
			t.Error("the parent's end ended the hold")
		}
	})
}

func TestTable_Again(t *testing.T) {
	tb := New("mutex", "orders")
	k := &fakeKeeper{}
	h := tb.Acquired("o", "o", 0, false, 0, t0, k)
	tb.Acquired("p", "p", 0, true, 0, t0, k) // newer: current
	t1 := t0.Add(time.Minute)
	if !tb.Again("o", t1) {
		t.Fatal("Again did not find the live hold")
	}
	if n := count(tb, h); n != 2 {
		t.Errorf("count = %d, want 2", n)
	}
	if tb.Current(Any) != h {
		t.Error("Again did not make the hold current")
	}
	agains, _ := k.keepings()[0].counts()
	if len(agains) != 1 || !agains[0].Equal(t1) {
		t.Errorf("keeping's Again = %v, want [%v]", agains, t1)
	}
	if tb.Again("x", t1) {
		t.Error("Again counted an absent hold")
	}
}

func TestTable_Observe(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	var (
		mu     sync.Mutex
		events []string
	)
	note := func(kind string) func(rt.Event) {
		return func(e rt.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, fmt.Sprintf("%s %s %s %v", kind, e.Kind, e.Name, errors.Is(e.Err, latchkey.ErrLost)))
		}
	}
	released, lost := note("released"), note("lost")
	rt.SetSink(c, func(h rt.Hook, e rt.Event) {
		switch h {
		case rt.Released:
			released(e)
		case rt.Lost:
			lost(e)
		}
	})
	defer rt.SetSink(c, nil)

	tb := New("mutex", "orders")
	tb.Observe(c)
	k := &fakeKeeper{}
	tb.Acquired("a", "a", 0, false, 0, t0, k)
	tb.Acquired("a", "a", 0, false, 0, t0, k)
	tb.Decremented("a") // not an end
	tb.Released("a")
	tb.Acquired("b", "b", 0, true, 0, t0, k)
	tb.NotHeld("b", "gone")

	mu.Lock()
	defer mu.Unlock()
	want := []string{"released mutex orders false", "lost mutex orders true"}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("hooks heard %q, want %q", events, want)
	}
}
