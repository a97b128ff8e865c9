package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/election"
)

// A leader's Deadline lies within its lease while it leads, moves later
// with the watchdog's renewals, and is the zero time before it leads and
// once it resigned or lost the leadership.
func TestElection_deadline(t *testing.T) {
	s := server(t)
	name := electionName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const lease = 600 * time.Millisecond // renewed every 200ms
	a := election.New(client(t, s), name, election.WithLeaseTimeout(lease))
	if d := a.Deadline(); !d.IsZero() {
		t.Fatalf("Deadline before Campaign = %v, want zero", d)
	}
	if _, err := a.Campaign(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	first := a.Deadline()
	if left := time.Until(first); left <= 0 || left > lease {
		t.Fatalf("Deadline of a new leadership in %v, want within its %v lease", left, lease)
	}
	for end := time.Now().Add(bound); !a.Deadline().After(first); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("Deadline still %v, %v after it; the renewals do not move it", first, bound)
		}
	}
	if left := time.Until(a.Deadline()); left <= 0 || left > lease {
		t.Errorf("Deadline after a renewal in %v, want within the lease", left)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if d := a.Deadline(); !d.IsZero() {
		t.Errorf("Deadline after Resign = %v, want zero", d)
	}

	lctx, err := a.Campaign(ctx, "a again")
	if err != nil {
		t.Fatal(err)
	}
	if a.Deadline().IsZero() {
		t.Fatal("Deadline of the second leadership is zero")
	}
	s.Client(t).Del(ctx, name)
	select {
	case <-lctx.Done():
	case <-time.After(bound):
		t.Fatal("the leadership's context still live after its lock was deleted")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, latchkey.ErrLost) {
		t.Fatalf("cause = %v, want ErrLost", cause)
	}
	if d := a.Deadline(); !d.IsZero() {
		t.Errorf("Deadline once the leadership's context says it was lost = %v, want zero", d)
	}
}
