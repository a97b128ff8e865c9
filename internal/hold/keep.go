package hold

import (
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/observe"
	"github.com/latchkey/latchkey/internal/shared"
	"github.com/redis/go-redis/v9"
)

// A Keeper keeps holds alive, or ends them when they run out.
type Keeper interface {
	// Keep starts keeping the hold of owner id, acquired by a request sent
	// at started. lost ends the hold; it is called at most once, never
	// from Keep's caller.
	Keep(id string, started time.Time, lost func(error)) Keeping
}

// A Keeping is what keeps one hold.
type Keeping interface {
	// Again tells that the owner acquired the hold once more, by a request
	// sent at started.
	Again(started time.Time)
	// Stop stops keeping the hold: it was released, or lost.
	Stop()
}

// Fixed keeps every hold for a fixed lease from its latest acquisition,
// less the drift allowance (see lease.Drift), and then declares it lost:
// nothing renews it.
type Fixed time.Duration

func (f Fixed) Keep(id string, started time.Time, lost func(error)) Keeping {
	d := time.Duration(f)
	valid := d - lease.Drift(d)
	return fixed{time.AfterFunc(time.Until(started.Add(valid)), func() {
		lost(fmt.Errorf("%w: lease of %v expired", lockerr.ErrLost, d))
	}), valid}
}

type fixed struct {
	t     *time.Timer
	valid time.Duration
}

func (f fixed) Again(started time.Time) { f.t.Reset(time.Until(started.Add(f.valid))) }
func (f fixed) Stop()                   { f.t.Stop() }

// A Watchdog keeps holds alive with the client's watchdog (see package
// lease): each is renewed by Kind with the Keys and Args it gives the hold's
// owner, to Lease, waiting up to Sync for replicas.
type Watchdog struct {
	Client redis.UniversalClient
	Kind   *lease.Kind
	Keys   func(owner string) []string
	Args   func(owner string) []any
	Lease  time.Duration
	Sync   time.Duration
	// Kind and name of the primitive, for the client's hooks (see
	// latchkey.Hooks.RenewalFailed).
	What observe.Event
}

func (w *Watchdog) Keep(id string, started time.Time, lost func(error)) Keeping {
	h := &lease.Hold{Kind: w.Kind, Keys: w.Keys(id), Args: w.Args(id), Lease: w.Lease, Sync: w.Sync, Lost: lost, What: w.What}
	s := shared.Watchdog(w.Client)
	s.Add(h, started)
	return watched{s, h}
}

type watched struct {
	s *lease.Scheduler
	h *lease.Hold
}

func (watched) Again(time.Time) {} // the renewals go on as they were
func (w watched) Stop()         { w.s.Remove(w.h) }
