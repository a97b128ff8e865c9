package rt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/redistest"
)

// A client has one Hub and one watchdog until Close lets go of them: the
// Hub is closed, the holds the watchdog renewed are declared lost, and a
// later use starts afresh.
func TestHubWatchdogClose(t *testing.T) {
	_, c := redistest.Miniredis(t)
	_, other := redistest.Miniredis(t)
	hub, watchdog := rt.Of(c).Hub(), rt.Of(c).Watchdog()
	if rt.Of(c).Hub() != hub || rt.Of(c).Watchdog() != watchdog {
		t.Fatal("Hub or Watchdog not made once")
	}
	if rt.Of(other).Hub() == hub || rt.Of(other).Watchdog() == watchdog {
		t.Fatal("two clients share a Hub or a watchdog")
	}
	lost := make(chan error, 1)
	watchdog.Add(&lease.Hold{Kind: lease.HashLock, Keys: []string{"k"}, Owner: "o", Lease: time.Hour,
		Args: func(o string) []any { return []any{o} },
		Lost: func(err error) { lost <- err }}, time.Now())

	if err := rt.Close(c); err != nil {
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
	if rt.Of(c).Hub() == hub || rt.Of(c).Watchdog() == watchdog {
		t.Fatal("a use after Close returned the closed Hub or watchdog")
	}
	if err := rt.Close(c); err != nil {
		t.Fatalf("Close of a Hub that was never used: %v", err)
	}
	if err := rt.Close(c); err != nil {
		t.Fatalf("Close with nothing kept: %v", err)
	}
	_ = rt.Close(other)
}
