package rwlock

import (
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/shared"
	"github.com/latchkey/latchkey/scripts"
)

// renewRead is the watchdog's renewal of read holds: it resets an owner's
// timeout keys and raises the hash TTL, and never touches other owners'.
var renewRead = &lease.Kind{Script: scripts.Get("rw_renew_read"), KeysPerItem: 2, ArgsPerItem: 1}

// hold is this handle's record of one owner's holds on one side. Its fields
// are guarded by the RWMutex's mu.
type hold struct {
	field     string // the hash field: <owner> or <owner>:write
	owner     string
	side      side
	plain     bool // taken without an owner in ctx
	releasing bool // a plain Unlock chose it and is releasing it
	count     int
	seq       uint64 // when last acquired, in the handle's order
	done      chan struct{}
	err       error       // why it ended: nil for an unlock, ErrLost otherwise
	renew     *lease.Hold // the watchdog's entry, nil with a fixed lease
	timer     *time.Timer // the fixed lease's end, nil with the watchdog
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel that is closed when the most recently acquired
// hold of rw, read or write, that is still live ends, by an unlock or by
// loss; Err then tells which. If rw holds nothing, Done returns the channel
// of its last hold, or a closed channel if there was none.
func (rw *RWMutex) Done() <-chan struct{} { return rw.doneOf(either) }

// Err returns nil while the hold that Done reports on is live, and after it
// was released. After it ended without an unlock (its lease expired, the
// key was deleted, the watchdog could not renew it) Err returns an error
// matching latchkey.ErrLost that says why.
func (rw *RWMutex) Err() error { return rw.errOf(either) }

// doneOf is Done for the holds of side s (read, write or either).
func (rw *RWMutex) doneOf(s side) <-chan struct{} {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.cur[s] == nil {
		return closed
	}
	return rw.cur[s].done
}

// errOf is Err for the holds of side s (read, write or either).
func (rw *RWMutex) errOf(s side) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.cur[s] == nil {
		return nil
	}
	return rw.cur[s].err
}

func (rw *RWMutex) holding(f string) bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.holds[f] != nil
}

// reservePlain picks the oldest plain hold on side s that no other Unlock
// is releasing, marks it, and returns its owner.
func (rw *RWMutex) reservePlain(s side) (string, bool) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var pick *hold
	for _, h := range rw.holds {
		if h.plain && h.side == s && !h.releasing && (pick == nil || h.seq < pick.seq) {
			pick = h
		}
	}
	if pick == nil {
		return "", false
	}
	pick.releasing = true
	return pick.owner, true
}

// abandoned applies an unlock of field f whose outcome is unknown: as
// Redisson does, the handle counts it as a release, so a hold whose count
// drops to 0 ends and its watchdog stops.
func (rw *RWMutex) abandoned(f string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	h := rw.holds[f]
	switch {
	case h == nil:
	case h.count > 1:
		h.count--
		h.releasing = false
	default:
		rw.endLocked(h, nil)
	}
}

// acquired records a successful acquisition whose script was sent at started.
func (rw *RWMutex) acquired(id string, s side, plain bool, started time.Time) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.seq++
	f := field(id, s)
	if h := rw.holds[f]; h != nil {
		h.count++
		h.seq = rw.seq
		if h.timer != nil {
			h.timer.Reset(time.Until(started.Add(rw.cfg.Fixed))) // the newest hold lasts longest
		}
		rw.cur[s], rw.cur[either] = h, h
		return
	}
	h := &hold{field: f, owner: id, side: s, plain: plain, count: 1, seq: rw.seq, done: make(chan struct{})}
	if rw.cfg.Fixed > 0 {
		h.timer = time.AfterFunc(time.Until(started.Add(rw.cfg.Fixed)), func() {
			rw.lose(h, fmt.Errorf("rwlock: %s: %w: %s lease of %v expired", rw.name, lockerr.ErrLost, s, rw.cfg.Fixed))
		})
	} else {
		h.renew = &lease.Hold{
			Kind:  lease.HashLock,
			Keys:  []string{rw.name},
			Args:  []any{f},
			Lease: rw.cfg.Watchdog,
			Sync:  rw.cfg.Sync.Timeout(),
			Lost:  func(err error) { rw.lose(h, fmt.Errorf("rwlock: %s: %s hold: %w", rw.name, s, err)) },
		}
		if s == read {
			h.renew.Kind = renewRead
			h.renew.Keys = append(h.renew.Keys, rw.timeoutPrefix(id))
		}
		shared.For(rw.client).Watchdog().Add(h.renew, started)
	}
	rw.holds[f] = h
	rw.cur[s], rw.cur[either] = h, h
}

// released applies the release script's answer for field f.
func (rw *RWMutex) released(f string, res int64) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	h := rw.holds[f]
	switch {
	case h == nil:
	case res == -1:
		rw.endLocked(h, fmt.Errorf("rwlock: %s: %w: %s hold found not held on unlock", rw.name, lockerr.ErrLost, h.side))
	case res == -2:
		rw.endLocked(h, fmt.Errorf("rwlock: %s: %w: the owner's other read holds had expired", rw.name, lockerr.ErrLost))
	case res == 0:
		rw.endLocked(h, nil)
	default:
		h.releasing = false
		if h.count--; h.count <= 0 {
			rw.endLocked(h, nil) // the owner's other holds were taken through other handles
		}
	}
}

// lose ends h as lost, unless it already ended.
func (rw *RWMutex) lose(h *hold, err error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.holds[h.field] == h {
		rw.endLocked(h, err)
	}
}

func (rw *RWMutex) endLocked(h *hold, err error) {
	delete(rw.holds, h.field)
	if h.renew != nil {
		shared.For(rw.client).Watchdog().Remove(h.renew)
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	h.err = err
	close(h.done)
	// Done and Err move on to the newest hold still live, if any.
	for _, c := range []side{h.side, either} {
		if rw.cur[c] == h {
			if n := rw.newestLocked(c); n != nil {
				rw.cur[c] = n
			}
		}
	}
}

// newestLocked returns the live hold of side s (read, write or either)
// acquired last, or nil.
func (rw *RWMutex) newestLocked(s side) *hold {
	var n *hold
	for _, o := range rw.holds {
		if (s == either || o.side == s) && (n == nil || o.seq > n.seq) {
			n = o
		}
	}
	return n
}
