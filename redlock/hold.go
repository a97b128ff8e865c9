package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockerr"
)

// An attempt is one try to take the lock on every node. Its replies may
// arrive after it was decided; state says what to do with a late grant.
type attempt struct {
	m     *Mutex
	owner string
	start time.Time // when the first request was sent

	mu    sync.Mutex
	state state
}

type state int

const (
	statePending state = iota // still counting replies: its undo (if any) comes later
	stateHeld                 // won: a late grant is part of the hold, renewed and unlocked with it
	stateFailed               // lost: a late grant must be undone
	stateEnded                // won, then unlocked or lost: a late grant must be undone
)

func (a *attempt) settle(s state) {
	a.mu.Lock()
	a.state = s
	a.mu.Unlock()
}

// late handles a node's reply that arrived after the attempt stopped
// waiting: a grant nobody wants any more is removed.
func (a *attempt) late(node int, r reply) {
	a.mu.Lock()
	s := a.state
	a.mu.Unlock()
	if r.err == nil && r.v == 1 && (s == stateFailed || s == stateEnded) {
		a.m.undoOne(context.Background(), a.owner, node, nil)
	}
}

// keeper keeps a hold won by att: a timer ends it when its validity runs
// out, and without a fixed lease a goroutine renews it on every node (see
// watch).
type keeper struct {
	m   *Mutex
	att *attempt
}

// held is what keeps one hold. Its fields are guarded by mu.
type held struct {
	m     *Mutex
	owner string
	att   *attempt
	lost  func(error)

	mu      sync.Mutex
	valid   hold.Validity // when its validity runs out
	expiry  *time.Timer   // fires then
	stop    chan struct{} // stops the watchdog; nil with a fixed lease
	stopped bool
}

func (k keeper) Keep(id string, started time.Time, lost func(error)) hold.Keeping {
	m := k.m
	h := &held{m: m, owner: id, att: k.att, lost: lost, valid: hold.NewValidity(started, m.cfg.TTL())}
	why := "validity ran out without a quorum renewal"
	if m.cfg.Fixed > 0 {
		why = fmt.Sprintf("validity of its %v lease ran out", m.cfg.Fixed)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expiry = time.AfterFunc(time.Until(h.valid.Until()), func() {
		h.lose(fmt.Errorf("%w: %s", lockerr.ErrLost, why))
	})
	if m.cfg.Fixed == 0 {
		h.stop = make(chan struct{})
		go m.watch(h, started)
	}
	return h
}

// Again: a re-entry is counted by the handle alone; the nodes hold once.
func (h *held) Again(time.Time) {}

// Stop stops the timer and the watchdog; a grant arriving late is undone.
func (h *held) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.stopped = true
	h.expiry.Stop()
	if h.stop != nil {
		close(h.stop)
	}
	h.att.settle(stateEnded)
}

// lose ends the hold as lost, unless it was stopped, and removes what is
// left of it on the nodes.
func (h *held) lose(err error) {
	h.mu.Lock()
	stopped := h.stopped
	h.mu.Unlock()
	if stopped {
		return
	}
	h.lost(err)
	all := make([]int, len(h.m.clients))
	for i := range all {
		all[i] = i
	}
	h.m.undo(context.Background(), h.owner, all)
}

// extend moves the validity to that of a quorum renewal sent at t. It
// reports false if the hold has ended.
func (h *held) extend(t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	h.expiry.Reset(time.Until(h.valid.Set(t, h.m.cfg.TTL(), true)))
	return true
}

// Extend moves the validity to that of an extension to d sent at sent,
// confirmed by a quorum if sure (see hold.Validity: one that may have
// applied on some nodes only can only shorten it).
func (h *held) Extend(sent time.Time, d time.Duration, sure bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.expiry.Reset(time.Until(h.valid.Set(sent, d, sure)))
}

// Until returns when the validity runs out.
func (h *held) Until() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.valid.Until()
}

// Done returns a channel that is closed when the current hold of m ends,
// by Unlock or by loss; Err then tells which. If m is not held, Done returns
// the channel of the last hold, or a closed channel if there was none.
func (m *Mutex) Done() <-chan struct{} { return m.holds.Done(hold.Any) }

// Err returns nil while m is held and after its last hold was released by
// Unlock. After a hold ended without Unlock Err returns an error matching
// latchkey.ErrLost that says why: its validity ran out without a quorum
// renewal, or a quorum of nodes no longer had it (and then the error also
// holds the *QuorumError of the last renewal).
func (m *Mutex) Err() error { return m.holds.Err(hold.Any) }

// Deadline returns when the validity of m's current hold runs out: the
// latest time at which the holder may still rely on it, lease - elapsed -
// drift after the quorum was asked (watchdog renewals and Extend move it
// on). It is before the lock's keys expire on any node that granted it.
// Deadline returns the zero time if m is not held.
//
// A process paused past its deadline learns nothing until it runs again:
// ask Deadline right before the work the lock guards, and let the resource
// reject what comes too late where it can.
func (m *Mutex) Deadline() time.Time {
	h := m.holds.Current(hold.Any)
	if h == nil {
		return time.Time{}
	}
	return h.Keeping().Until()
}
