// Package acquire is the acquisition state machine that every blocking
// lock and semaphore runs inside the wait loop. One acquisition is one
// request, sent again by each attempt; this package keeps what the
// attempts' answers mean for it:
//
//   - an attempt that failed without an answer may have been applied
//     (unless it provably never left: flight.NeverSent), so a call that then
//     gives up must settle it;
//   - a grant that no replica acknowledged is given back at once, and the
//     call fails with the replica error: a failover now would lose it;
//   - a grant answered after its lease may have run out (counted from the
//     earliest attempt that may have made it, less the drift allowance) is
//     given back, and the call goes on under a new request;
//   - a refusal means nothing of the request was granted so far;
//   - once granted, nothing more is sent against the request's record, which
//     goes at once (scripts.Finished) unless a send may have had another
//     copy still on its way.
//
// A primitive supplies the rest (Steps): how to send an attempt and decode
// its reply, how to give a grant back, and what giving up leaves to undo.
package acquire

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/redis/go-redis/v9"
)

// An Answer is one attempt's reply, as the primitive decodes it.
type Answer struct {
	Granted bool
	// Retry, when not granted, is the longest to sleep before the next
	// attempt; negative when only a message can tell.
	Retry time.Duration
	// Refused, if set, ends the call with this error: the request was
	// answered and can never be granted (a deadlock, too many permits).
	Refused error
	// Reply is the attempt's reply, for its replica acknowledgements.
	Reply rt.Reply
}

// Steps are what an acquisition means for one primitive.
type Steps struct {
	// Client is the client the attempts are sent on.
	Client redis.UniversalClient
	// Send sends one attempt and decodes its reply. An error (other than
	// Answer.Refused) leaves the attempt's fate unknown.
	Send func(ctx context.Context) (Answer, error)
	// Undo gives back a grant that cannot be kept. Its ctx is detached
	// from the call's and sends no replica wait (see scripts.Undo).
	Undo func(ctx context.Context)
	// Lease, if positive, is how long a grant lasts; Restart then gives
	// the acquisition a new request after a grant answered too late.
	Lease   time.Duration
	Restart func()
	// Abandon undoes what the call left when it gave up: its queue entry,
	// and, when unsure, what an unanswered attempt may have taken.
	Abandon func(ctx context.Context, unsure bool)
}

// A Machine is one acquisition's state. Its methods are for the one
// goroutine of a wait loop.
type Machine struct {
	steps  Steps
	since  time.Time // the earliest attempt that may have been granted
	unsure bool      // an attempt went unanswered and may have been applied
	// doubt: a send of the request may have had another copy, which may
	// still be on its way: its record must live out its TTL.
	doubt bool
	// left holds the attempts that the call's ctx left on their way.
	left flight.Flights
}

// New returns the state machine of one acquisition.
func New(s Steps) *Machine { return &Machine{steps: s} }

// Attempt makes one attempt (a wait.Attempt): it reports whether the
// acquisition is granted and kept, or how long to sleep before the next.
func (m *Machine) Attempt(ctx context.Context) (bool, time.Duration, error) {
	if m.since.IsZero() {
		m.since = time.Now()
	}
	a, err := m.steps.Send(flight.Track(ctx, &m.left))
	m.doubt = m.doubt || err != nil || !a.Reply.Single
	switch {
	case err != nil:
		if !flight.NeverSent(m.steps.Client, err) {
			m.unsure = true
		}
		return false, 0, err
	case a.Refused != nil:
		m.since = time.Time{}
		return false, 0, a.Refused
	case a.Granted && !a.Reply.Replicated():
		// The request's record answers for any earlier attempt that went
		// unanswered: this was its one grant, and it goes back.
		m.steps.Undo(rt.Undo(ctx))
		m.unsure = false
		return false, 0, a.Reply.SyncErr()
	case a.Granted && m.tooLate():
		// The lock may be someone else's by now: give it back and start
		// again, under a new request.
		m.steps.Undo(rt.Undo(ctx))
		m.since, m.unsure, m.doubt = time.Time{}, false, false
		m.steps.Restart()
		return false, 0, nil
	case a.Granted:
		// Nothing more is sent against the request's record: with no
		// copy of any attempt left on its way, it goes at once.
		if !m.doubt {
			rt.Finished(m.steps.Client, a.Reply.Record)
		}
		return true, 0, nil
	}
	m.since = time.Time{} // refused: nothing of this request was granted
	return false, a.Retry, nil
}

// tooLate reports whether a grant made by the earliest attempt that may
// have made it may have expired already.
func (m *Machine) tooLate() bool {
	d := m.steps.Lease
	return d > 0 && time.Since(m.since) >= d-lease.Drift(d)
}

// Since returns when the earliest attempt that may have made the latest
// grant was sent: a granted hold is valid from then.
func (m *Machine) Since() time.Time { return m.since }

// Abandon undoes what the call left when it gave up (a wait.Spec's
// Abandon). An attempt that the call's ctx left on its way is waited for
// first, for at most half of ctx's time: undone before it applied, it
// would apply behind the undo.
func (m *Machine) Abandon(ctx context.Context) {
	if m.steps.Abandon == nil {
		return
	}
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		lctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/2))
	}
	m.left.Land(lctx)
	cancel()
	m.steps.Abandon(ctx, m.unsure)
}
