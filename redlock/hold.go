package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

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
		a.m.undoOne(context.Background(), a.owner, node)
	}
}

// hold is this handle's record of one owner's hold. Its fields are guarded
// by the Mutex's mu.
type hold struct {
	owner  string
	plain  bool // taken without an owner in ctx
	count  int
	att    *attempt
	done   chan struct{}
	err    error         // why it ended: nil for Unlock, ErrLost otherwise
	expiry *time.Timer   // fires when the validity runs out
	until  time.Time     // when it does
	stop   chan struct{} // stops the watchdog; nil with a fixed lease
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel that is closed when the current hold of m ends,
// by Unlock or by loss; Err then tells which. If m is not held, Done returns
// the channel of the last hold, or a closed channel if there was none.
func (m *Mutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return closed
	}
	return m.cur.done
}

// Err returns nil while m is held and after its last hold was released by
// Unlock. After a hold ended without Unlock Err returns an error matching
// latchkey.ErrLost that says why: its validity ran out without a quorum
// renewal, or a quorum of nodes no longer had it (and then the error also
// holds the *QuorumError of the last renewal).
func (m *Mutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return nil
	}
	return m.cur.err
}

// Deadline returns when the validity of m's current hold runs out: the
// latest time at which the holder may still rely on it, lease - elapsed -
// drift after the quorum was asked (watchdog renewals move it on). It is
// before the lock's keys expire on any node that granted it. Deadline
// returns the zero time if m is not held.
func (m *Mutex) Deadline() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil || m.holds[m.cur.owner] != m.cur {
		return time.Time{}
	}
	return m.cur.until
}

// reenter counts one more hold for owner id if it holds m.
func (m *Mutex) reenter(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.holds[id]
	if h == nil {
		return false
	}
	h.count++
	m.cur = h
	return true
}

// plainOwner returns the owner id of the handle's current plain hold.
func (m *Mutex) plainOwner() (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, h := range m.holds {
		if h.plain {
			return id, true
		}
	}
	return "", false
}

// acquired records the hold won by a.
func (m *Mutex) acquired(id string, plain bool, a *attempt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &hold{owner: id, plain: plain, count: 1, att: a, done: make(chan struct{})}
	why := "validity ran out without a quorum renewal"
	if m.cfg.Fixed > 0 {
		why = fmt.Sprintf("validity of its %v lease ran out", m.cfg.Fixed)
	}
	h.until = m.validUntil(a.start)
	h.expiry = time.AfterFunc(time.Until(h.until), func() {
		m.lose(h, fmt.Errorf("redlock: %s: %w: %s", m.name, lockerr.ErrLost, why))
	})
	if m.cfg.Fixed == 0 {
		h.stop = make(chan struct{})
		go m.watch(h, a.start)
	}
	m.holds[id] = h
	m.cur = h
}

// validUntil is when a hold confirmed by a quorum of requests sent at t
// stops being valid.
func (m *Mutex) validUntil(t time.Time) time.Time {
	return t.Add(m.cfg.TTL() - m.drift())
}

// leave takes one hold of owner id off the books. It returns the hold, and
// whether that was its last count, in which case the hold is detached (no
// longer renewed or timed) and the caller must release it and finish it.
func (m *Mutex) leave(id string) (h *hold, last bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h = m.holds[id]
	if h == nil {
		return nil, false
	}
	if h.count--; h.count > 0 {
		return h, false
	}
	m.detachLocked(h)
	return h, true
}

// lose ends h as lost, unless it already ended, and removes what is left of
// it on the nodes.
func (m *Mutex) lose(h *hold, err error) {
	m.mu.Lock()
	if m.holds[h.owner] != h {
		m.mu.Unlock()
		return
	}
	m.detachLocked(h)
	m.mu.Unlock()
	m.finish(h, err)
	all := make([]int, len(m.clients))
	for i := range all {
		all[i] = i
	}
	m.undo(context.Background(), h.owner, all)
}

func (m *Mutex) detachLocked(h *hold) {
	delete(m.holds, h.owner)
	h.expiry.Stop()
	if h.stop != nil {
		close(h.stop)
	}
	h.att.settle(stateEnded)
}

// finish closes a detached hold's Done channel with err as its reason.
func (m *Mutex) finish(h *hold, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h.err = err
	close(h.done)
}

// extend moves h's validity to that of a quorum renewal sent at t. It
// reports false if h has ended.
func (m *Mutex) extend(h *hold, t time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds[h.owner] != h {
		return false
	}
	h.until = m.validUntil(t)
	h.expiry.Reset(time.Until(h.until))
	return true
}
