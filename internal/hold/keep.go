package hold

import (
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
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
	// Extend tells that a request sent at sent set the hold's lease to d;
	// sure is false if it went unanswered, so that it may have applied
	// at any time since. Only a hold kept by a fixed lease is extended:
	// the watchdog's renewals set their own.
	Extend(sent time.Time, d time.Duration, sure bool)
	// Until is the end of what this process knows of the hold's validity:
	// its latest confirmed acquisition, renewal or extension plus the
	// lease, less the drift allowance (see lease.Drift).
	Until() time.Time
	// Stop stops keeping the hold: it was released, or lost.
	Stop()
}

// Fixed keeps every hold for a fixed lease from its latest acquisition or
// extension, less the drift allowance (see lease.Drift), and then declares
// it lost: nothing renews it.
type Fixed time.Duration

func (f Fixed) Keep(id string, started time.Time, lost func(error)) Keeping {
	d := time.Duration(f)
	// The acquisition's answer came after started; any request sent after
	// Keep was sent later still.
	k := &fixed{lease: d, valid: NewValidity(started, d), set: d}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.t = time.AfterFunc(time.Until(k.valid.Until()), func() {
		k.mu.Lock()
		set := k.set
		k.mu.Unlock()
		lost(fmt.Errorf("%w: %w (a fixed lease of %v)", lockerr.ErrLost, lease.ErrExpired, set))
	})
	return k
}

// fixed is the Keeping of a Fixed lease.
type fixed struct {
	lease time.Duration // what an acquisition sets

	mu    sync.Mutex
	t     *time.Timer
	valid Validity
	set   time.Duration // the lease the latest request set
}

func (f *fixed) Again(started time.Time) { f.Extend(started, f.lease, true) }

func (f *fixed) Extend(sent time.Time, d time.Duration, sure bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set = d
	f.t.Reset(time.Until(f.valid.Set(sent, d, sure)))
}

func (f *fixed) Until() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.valid.Until()
}

func (f *fixed) Stop() { f.t.Stop() }

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
	What rt.Event

	failedOnce sync.Once
	failed     func(err error) // tells the hooks of a failed renewal
}

func (w *Watchdog) Keep(id string, started time.Time, lost func(error)) Keeping {
	w.failedOnce.Do(func() {
		w.failed = func(err error) {
			e := w.What
			e.Err = err
			rt.Report(w.Client, rt.RenewalFailed, e)
		}
	})
	k := &watched{s: rt.Of(w.Client).Watchdog(), h: lease.Hold{Kind: w.Kind, Keys: w.Keys(id), Owner: id, Args: w.Args,
		Lease: w.Lease, Sync: w.Sync, Lost: lost, Failed: w.failed}}
	k.s.Add(&k.h, started)
	return k
}

type watched struct {
	s *lease.Scheduler
	h lease.Hold // in the Keeping itself: one allocation for both
}

func (*watched) Again(time.Time)                       {} // the renewals go on as they were
func (*watched) Extend(time.Time, time.Duration, bool) {} // nor does the lease change
func (w *watched) Until() time.Time                    { return w.s.Valid(&w.h) }
func (w *watched) Stop()                               { w.s.Remove(&w.h) }
