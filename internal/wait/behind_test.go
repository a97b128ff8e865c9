package wait_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/wait"
)

// A call whose ctx ends returns without waiting for its clean-up, which
// goes on to its end with a live ctx.
func TestUntil_abandonOffCallersPath(t *testing.T) {
	h, _ := hubOn(t)
	f := &fake{retry: longBusy}
	release := make(chan struct{})
	var finished atomic.Bool
	s := f.spec(h, t.Name())
	s.Call = &call{f.attempt, func(ctx context.Context) {
		<-release // a clean-up stuck on a slow server
		finished.Store(ctx.Err() == nil)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := await(t, run(ctx, -1, s))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("Until = %v, %v; want an error matching context.DeadlineExceeded", r.ok, r.err)
	}
	close(release) // the call returned while its clean-up was stuck
	flight.Settle()
	if !finished.Load() {
		t.Fatal("the clean-up did not run to its end with a live ctx")
	}
}

// A wait whose budget ran out, with ctx live and Redis answering, has
// cleaned up by the time it returns: a TryLock that returned false left
// nothing behind.
func TestUntil_budgetSpentCleansUpBeforeReturning(t *testing.T) {
	h, _ := hubOn(t)
	f := &fake{retry: longBusy}
	r := await(t, run(context.Background(), 50*time.Millisecond, f.spec(h, t.Name())))
	if r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v; want false, nil", r.ok, r.err)
	}
	f.mu.Lock()
	n := f.abandoned
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("Abandon ran %d times before Until returned, want 1", n)
	}
}

// The ride-out is the client's: an outage longer than it ends a call
// without a budget or a deadline with the outage's error.
func TestUntil_rideOutIsTheClients(t *testing.T) {
	h, c := hubOn(t)
	rt.SetRideOut(c, 300*time.Millisecond)
	t.Cleanup(func() { rt.SetRideOut(c, 0) })
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	f := &fake{err: refused}
	s := f.spec(h, t.Name())
	s.Client = c
	r := await(t, run(context.Background(), -1, s)) // the default 30s would outlast await
	if !errors.Is(r.err, syscall.ECONNREFUSED) {
		t.Fatalf("Until = %v, %v; want the outage's error", r.ok, r.err)
	}
	if n := f.attempts(); n < 2 {
		t.Fatalf("%d attempts: the outage was not ridden out", n)
	}
	f.checkAbandoned(t, 1)
}

// A single attempt rides out nothing: its error is the answer.
func TestUntil_singleAttemptRidesOutNothing(t *testing.T) {
	h, c := hubOn(t)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	f := &fake{err: refused}
	s := f.spec(h, t.Name())
	s.Client = c
	r := await(t, run(context.Background(), 0, s))
	if !errors.Is(r.err, syscall.ECONNREFUSED) || f.attempts() != 1 {
		t.Fatalf("Until = %v, %v after %d attempts; want the error of one attempt", r.ok, r.err, f.attempts())
	}
}

// Detach keeps ctx's values and drops its cancellation, bounded by the
// client's ride-out.
func TestDetach(t *testing.T) {
	_, c := hubOn(t)
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "owner"))
	cancel()
	d, stop := wait.Detach(ctx, c)
	defer stop()
	if d.Err() != nil || d.Value(key{}) != "owner" {
		t.Fatalf("Detach: Err %v, value %v; want live, with ctx's values", d.Err(), d.Value(key{}))
	}
	dl, ok := d.Deadline()
	if !ok || time.Until(dl) < rt.DefaultRideOut {
		t.Fatalf("Detach: deadline %v (set %v), want one past the ride-out", dl, ok)
	}
}
