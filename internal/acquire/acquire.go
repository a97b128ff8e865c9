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
// its reply, how to give a grant back, and the steps of the one give-up
// ladder (Abandon): settle an unanswered attempt, leave the queue, give
// back what the attempt took.
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
	// Undo gives back a grant that cannot be kept, or what an unanswered
	// attempt took. Its ctx is detached from the call's and sends no
	// replica wait (see rt.Undo).
	Undo func(ctx context.Context)
	// Lease, if positive, is how long a grant lasts; Restart, if set, then
	// gives the acquisition a new request after a grant answered too late
	// (nil for one without a request record).
	Lease   time.Duration
	Restart func()

	// The give-up ladder (see Abandon). Settle finds out whether an
	// attempt that went unanswered applied, and makes sure that a copy of
	// it still on its way does not (the request record's Resolve); nil
	// for a request without a record (a fresh id, which a resend finds
	// holding), which counts as applied. Unsettled, if set, is told when
	// Settle failed. Leave takes the call's entry out of the queue, giving
	// back a grant that reached it too late; nil when nothing queued.
	// Gone, if set, reports that the entry is gone already (a delete took
	// it): then only an unanswered attempt is left to settle.
	Settle    func(ctx context.Context) (applied bool, err error)
	Unsettled func()
	Leave     func(ctx context.Context) error
	Gone      func() bool
	// Park keeps the hand-back in the client's Book of parked permits
	// (rt.Book), so that Close runs what the call could not; Shared says
	// that the call waits through the client's shared Hub, which Close
	// ends. The semaphores park theirs: a grant of permits to a waiter
	// that gave up must come back.
	Park, Shared bool
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
	// give is the call's hand-back in its client's Book, if it parks.
	give *rt.GiveUp
}

// New returns the state machine of one acquisition.
func New(s Steps) *Machine {
	m := &Machine{steps: s}
	if s.Park {
		m.give = rt.Of(s.Client).Parked().Waiting(s.Shared, m.settle, m.leave)
	}
	return m
}

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
		if m.steps.Restart != nil {
			m.steps.Restart()
		}
		return false, 0, nil
	case a.Granted:
		// Nothing more is sent against the request's record: with no
		// copy of any attempt left on its way, it goes at once.
		if !m.doubt {
			rt.Finished(m.steps.Client, a.Reply.Record)
		}
		if m.give != nil {
			m.give.Took()
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
// Abandon): the give-up ladder. An attempt that went unanswered is settled
// first, so that no copy of it applies behind what follows; then the
// call leaves the queue; then what the attempt took, if it applied, is
// given back. An attempt that the call's ctx left on its way is waited
// for first, for at most half of ctx's time: undone before it applied, it
// would apply behind the undo. A parked hand-back runs through the
// client's Book, in the background while unsure, for as long as the
// request's record lives.
func (m *Machine) Abandon(ctx context.Context) {
	if m.give != nil {
		m.give.GaveUp() // Close hands back what it may hold from now on
	}
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		lctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Until(dl)/2))
	}
	m.left.Land(lctx)
	cancel()
	switch {
	case m.give != nil && m.steps.Gone != nil && m.steps.Gone() && !m.unsure:
		m.give.Took() // what the call left is gone
	case m.give != nil:
		m.give.Abandon(ctx, m.unsure, rt.RecordTTL(m.steps.Client))
	default:
		if m.unsure {
			_ = m.settle(ctx)
		}
		_ = m.leave(ctx)
	}
}

// settle settles an attempt that went unanswered: it gives back what the
// attempt took, if it applied (see Steps.Settle).
func (m *Machine) settle(ctx context.Context) error {
	applied := true
	if m.steps.Settle != nil {
		var err error
		if applied, err = m.steps.Settle(ctx); err != nil {
			if m.steps.Unsettled != nil {
				m.steps.Unsettled()
			}
			return err
		}
	}
	if applied && m.steps.Undo != nil {
		m.steps.Undo(ctx)
	}
	return nil
}

// leave takes the call out of the queue, unless nothing queued.
func (m *Machine) leave(ctx context.Context) error {
	if m.steps.Leave == nil || m.steps.Gone != nil && m.steps.Gone() {
		return nil
	}
	return m.steps.Leave(ctx)
}
