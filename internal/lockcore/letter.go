package lockcore

import (
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/wait"
)

// Reentry is the scripts' flag for w's attempts: "0" for a fresh id, "1"
// for an owner that may re-enter, "2" for one that holds the lock through
// this handle, whose attempt re-enters and never takes a grant.
func (w *Waiter) Reentry() string {
	switch {
	case w.Holding:
		return "2"
	case w.Reentrant:
		return "1"
	}
	return "0"
}

// HubID is the Hub id w's queue entries carry, the channel its letters go
// to: none for a polling waiter.
func (w *Waiter) HubID() string {
	if w.Polling {
		return ""
	}
	return w.Hub.ID()
}

// ServerTime notes that an attempt sent at sent ran when the server's
// clock read micros (see handoff.Clock).
func (w *Waiter) ServerTime(micros int64, sent time.Time) { w.clock.ServerTime(micros, sent) }

// Letter reads a letter to w, which the Hub received at.
// "<token> <server clock in µs>" is written by the release that granted w
// the lock, for the grace from then: on our clock, no sooner than that
// server time less the most the server's clock is ahead of ours (see
// ServerTime), which bounds the letter's delay whatever the clocks' offset.
// Letter reports done if w may return holding the lock on the letter
// alone. It may not when less than half the grace is left by that bound,
// or nothing dates the letter (then an attempt takes the hold if it is
// still there), or when w's master has replicas to wait for (the release's
// WAIT may not be over: an attempt, which finds the grant, waits for
// them). "next" says that the waiter ahead of w was granted the lock: w
// tries once the grace is over, should that waiter never take it; so does
// an empty letter, the Hub's word that a letter for a waiter of the same
// client that left went astray (see notify.Want.Key).
func (w *Waiter) Letter(body string, at time.Time) (done bool, within time.Duration) {
	if body == "turn" {
		// The lock is free, and this waiter's after Redisson's waiters:
		// its attempts, a millisecond apart, see whether one took it.
		return false, 0
	}
	if !handoff.IsGrant(body) {
		// "": a letter for a waiter of this client that left went astray,
		// maybe a grant, which nobody will take.
		return false, handoff.After(body, at)
	}
	token, granted, ok := w.clock.Grant(body)
	if !ok || w.Synced {
		return false, 0
	}
	w.grantedAt, w.grantToken = granted, token
	return true, 0
}

// Mail returns w's letters as the wait loop takes them.
func (w *Waiter) Mail() wait.Mail { return mail{w} }

type mail struct{ w *Waiter }

func (m mail) Key() string                                            { return m.w.Key }
func (m mail) Letter(body string, at time.Time) (bool, time.Duration) { return m.w.Letter(body, at) }
func (m mail) Live(heard bool)                                        { m.w.Heard = heard }
