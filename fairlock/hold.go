package fairlock

import (
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
)

// hold is this handle's record of one owner's hold. Its fields are guarded
// by the Mutex's mu.
type hold struct {
	owner string
	plain bool   // taken without an owner in ctx
	seq   uint64 // order of creation among the handle's holds
	// releasing marks a plain hold whose Unlock is under way, so that a
	// concurrent Unlock picks the hold that another goroutine took since.
	releasing bool
	count     int
	done      chan struct{}
	err       error       // why it ended: nil for Unlock, ErrLost otherwise
	renew     *lease.Hold // the watchdog's entry, nil with a fixed lease
	timer     *time.Timer // the fixed lease's end, nil with the watchdog
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
// Unlock. After a hold ended without Unlock (its lease expired, the key was
// deleted or force-unlocked, the watchdog could not renew it) Err returns an
// error matching latchkey.ErrLost that says why.
func (m *Mutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return nil
	}
	return m.cur.err
}

// claimPlain picks the handle's current plain hold for an Unlock and marks
// it releasing. A record can outlive its release in Redis for a moment
// (until released runs, or until a lost lease's timer fires), while another
// goroutine already took a new plain hold: the newest unclaimed one is the
// live one.
func (m *Mutex) claimPlain() (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.newestPlainLocked(false)
	if h == nil {
		return "", false
	}
	h.releasing = true
	return h.owner, true
}

// currentPlain returns the owner id of the newest plain hold.
func (m *Mutex) currentPlain() (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.newestPlainLocked(true)
	if h == nil {
		return "", false
	}
	return h.owner, true
}

func (m *Mutex) newestPlainLocked(claimed bool) *hold {
	var best *hold
	for _, h := range m.holds {
		if h.plain && (claimed || !h.releasing) && (best == nil || h.seq > best.seq) {
			best = h
		}
	}
	return best
}

// unclaim undoes claimPlain after an Unlock that got no answer.
func (m *Mutex) unclaim(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.holds[id]; h != nil {
		h.releasing = false
	}
}

// acquired records a successful acquisition whose script was sent at started.
func (m *Mutex) acquired(id string, plain bool, started time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.holds[id]
	if h != nil {
		h.count++
		if h.timer != nil {
			h.timer.Reset(time.Until(started.Add(m.cfg.lease))) // re-entry resets the TTL
		}
		m.cur = h
		return
	}
	m.seq++
	h = &hold{owner: id, plain: plain, seq: m.seq, count: 1, done: make(chan struct{})}
	if m.cfg.lease > 0 {
		h.timer = time.AfterFunc(time.Until(started.Add(m.cfg.lease)), func() {
			m.lose(h, fmt.Errorf("fairlock: %s: %w: lease of %v expired", m.name, lockerr.ErrLost, m.cfg.lease))
		})
	} else {
		h.renew = &lease.Hold{
			Kind:  lease.HashLock, // Redisson renews a fair lock as a plain lock
			Keys:  []string{m.name},
			Args:  []any{id},
			Lease: m.cfg.watchdog,
			Lost:  func(err error) { m.lose(h, fmt.Errorf("fairlock: %s: %w", m.name, err)) },
		}
		lease.For(m.client).Add(h.renew, started)
	}
	m.holds[id] = h
	m.cur = h
}

// released applies the release operation's answer for owner id.
func (m *Mutex) released(id string, res int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.holds[id]
	switch {
	case h == nil:
	case res < 0:
		m.endLocked(h, fmt.Errorf("fairlock: %s: %w: found not held on unlock", m.name, lockerr.ErrLost))
	case res == 0:
		h.count--
	default:
		m.endLocked(h, nil)
	}
}

// lose ends h as lost, unless it already ended.
func (m *Mutex) lose(h *hold, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds[h.owner] == h {
		m.endLocked(h, err)
	}
}

func (m *Mutex) endLocked(h *hold, err error) {
	delete(m.holds, h.owner)
	if h.renew != nil {
		lease.For(m.client).Remove(h.renew)
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	h.err = err
	close(h.done)
}
