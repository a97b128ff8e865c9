package flight_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/wait"
)

// Bounded returns an answer that comes in time, and returns when ctx's
// deadline passes otherwise, leaving the request in the ctx's Flights,
// which Land waits for; a clean-up call's ctx waits for the answer itself.
func TestBounded(t *testing.T) {
	quick := func(context.Context) int { return 7 }
	if v, ok := flight.Bounded(context.Background(), nil, quick); !ok || v != 7 {
		t.Errorf("Bounded(background, quick) = %v, %v; want 7, true", v, ok)
	}

	var fl flight.Flights
	release := make(chan struct{})
	slow := func(context.Context) int { <-release; return 1 }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ctx = flight.Track(ctx, &fl)
	if v, ok := flight.Bounded(ctx, nil, slow); ok || v != 0 {
		t.Errorf("Bounded(ended ctx, slow) = %v, %v; want 0, false", v, ok)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if fl.Land(short) {
		t.Error("Land reported every request answered while one was on its way")
	}
	close(release)
	long, cancelLong := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelLong()
	if !fl.Land(long) {
		t.Error("Land did not see the request answered")
	}

	dctx, dcancel := wait.Detach(context.Background(), nil)
	defer dcancel()
	dctx, dcancel2 := context.WithTimeout(dctx, 10*time.Millisecond)
	defer dcancel2()
	late := func(context.Context) int { time.Sleep(50 * time.Millisecond); return 3 }
	if v, ok := flight.Bounded(dctx, nil, late); !ok || v != 3 {
		t.Errorf("Bounded(detached, late) = %v, %v; want 3, true (a clean-up is not cut short)", v, ok)
	}
}
