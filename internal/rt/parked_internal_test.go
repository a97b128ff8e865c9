package rt

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A hand-back settles an unanswered attempt once, however often its
// queue step fails and is tried again, and Close tries again what failed.
func TestGiveUp_settlesOnceAndCloseTriesAgain(t *testing.T) {
	b := newBook()
	var settled, left atomic.Int32
	fail := errors.New("connection reset")
	g := b.Waiting(false,
		func(context.Context) error { settled.Add(1); return nil },
		func(context.Context) error {
			if left.Add(1) == 1 {
				return fail
			}
			return nil
		})
	if err := g.Back(context.Background(), true); !errors.Is(err, fail) {
		t.Fatalf("Back = %v, want the failure", err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Back(context.Background(), true); err != nil {
		t.Fatalf("Back once done = %v", err)
	}
	if settled.Load() != 1 || left.Load() != 2 {
		t.Errorf("settled %d times and left %d, want 1 and 2", settled.Load(), left.Load())
	}
}

// Close takes the waiters of the shared Hub out of the queue without
// settling them (they may still take a grant, and settle as they end),
// and leaves those of a Hub of their own, which go on waiting, alone.
func TestBook_closeEndsOnlyTheSharedHubsWaiters(t *testing.T) {
	b := newBook()
	var settled, left [2]atomic.Int32
	for i, shared := range []bool{true, false} {
		b.Waiting(shared,
			func(context.Context) error { settled[i].Add(1); return nil },
			func(context.Context) error { left[i].Add(1); return nil })
	}
	_ = b.close()
	if settled[0].Load() != 0 || left[0].Load() != 1 || settled[1].Load() != 0 || left[1].Load() != 0 {
		t.Errorf("shared Hub's waiter settled %d, left %d; own Hub's settled %d, left %d; want 0, 1, 0, 0",
			settled[0].Load(), left[0].Load(), settled[1].Load(), left[1].Load())
	}
}

// A purge runs once for grants made together, again while it grants
// anew, and at once when the Book closes first.
func TestBook_purges(t *testing.T) {
	b := newBook()
	runs := make(chan struct{}, 8)
	var n atomic.Int32
	run := func(context.Context) (bool, error) {
		runs <- struct{}{}
		return n.Add(1) == 1, nil // the first grants anew
	}
	b.Granted("k", 10*time.Millisecond, run)
	b.Granted("k", 10*time.Millisecond, run)
	for range 2 {
		select {
		case <-runs:
		case <-time.After(5 * time.Second):
			t.Fatal("the purge did not run")
		}
	}
	select {
	case <-runs:
		t.Fatal("a third purge ran")
	case <-time.After(200 * time.Millisecond):
	}
	b.Granted("k", time.Hour, run)
	_ = b.close()
	select {
	case <-runs:
	default:
		t.Error("Close did not run the purge due in an hour")
	}
}

// A release begun once a purge was due did its work: the purge is
// dropped. One begun before leaves it due, and it runs.
func TestBook_releaseStandsInForDuePurge(t *testing.T) {
	b := newBook()
	defer func() { _ = b.close() }()
	runs := make(chan string, 8)
	run := func(key string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) { runs <- key; return false, nil }
	}
	b.Granted("late", 10*time.Millisecond, run("late"))
	b.Refreshed("late", time.Now().Add(time.Minute)) // begun long after the purge is due
	b.Granted("early", 10*time.Millisecond, run("early"))
	b.Refreshed("early", time.Now()) // begun before: the grants were not due yet
	b.Refreshed("other", time.Now().Add(time.Minute))
	select {
	case key := <-runs:
		if key != "early" {
			t.Fatalf("the purge of %q ran", key)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the purge that a release did not stand in for did not run")
	}
	select {
	case key := <-runs:
		t.Fatalf("the purge of %q ran", key)
	case <-time.After(300 * time.Millisecond):
	}
	b.mu.Lock()
	left := len(b.purges)
	b.mu.Unlock()
	if left != 0 {
		t.Errorf("%d purges left", left)
	}
}
