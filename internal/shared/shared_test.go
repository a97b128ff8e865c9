package shared_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/shared"
)

// For returns one state per client, with one Hub and one watchdog, until
// Close releases them: the Hub is closed, the holds the watchdog renewed
// are declared lost, and For starts afresh.
func TestForAndClose(t *testing.T) {
	_, c := redistest.Miniredis(t)
	_, other := redistest.Miniredis(t)
	s := shared.For(c)
	if shared.For(c) != s || shared.For(other) == s {
		t.Fatal("For does not return one state per client")
	}
	hub, watchdog := s.Hub(), s.Watchdog()
	if s.Hub() != hub || s.Watchdog() != watchdog {
		t.Fatal("Hub or Watchdog not made once")
	}
	lost := make(chan error, 1)
	watchdog.Add(&lease.Hold{Kind: lease.HashLock, Keys: []string{"k"}, Args: []any{"o"}, Lease: time.Hour,
		Lost: func(err error) { lost <- err }}, time.Now())

	if err := shared.Close(c); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, lockerr.ErrClosed) {
			t.Fatalf("hold lost with %v, want ErrClosed", err)
		}
	default:
		t.Fatal("Close did not end the watchdog's holds")
	}
	if _, err := hub.Subscribe(context.Background(), "ch", nil); !errors.Is(err, lockerr.ErrClosed) {
		t.Fatalf("Subscribe on the closed Hub = %v, want ErrClosed", err)
	}
	if n := shared.For(c); n == s || n.Hub() == hub {
		t.Fatal("For after Close returned the closed state")
	}
	if err := shared.Close(c); err != nil {
		t.Fatalf("Close of a state whose Hub was never used: %v", err)
	}
	if err := shared.Close(c); err != nil {
		t.Fatalf("Close with nothing kept: %v", err)
	}
	_ = shared.Close(other)
}
