// Package hold keeps a lock handle's books on its holds: which owners hold
// through it and how many times, which hold Done and Err report on, the
// fixed-lease timer or watchdog entry that keeps each alive or declares it
// lost, and which plain hold an Unlock without an owner releases.
//
// It serves the hash locks whose holds are one count per owner (mutex,
// fairlock); the read-write lock and RedLock keep books of their own shape.
package hold

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/shared"
	"github.com/redis/go-redis/v9"
)

// Keep says how a hold stays alive: a fixed lease, or the watchdog.
type Keep struct {
	Lease    time.Duration // > 0: fixed, ended by a local timer
	Watchdog time.Duration // otherwise: renewed with this lease
	Sync     time.Duration // how long a renewal waits for replicas
	Kind     *lease.Kind   // the renewal script; Keys and Args as it takes them
	Keys     []string
	Args     func(owner string) []any
}

// A Table is one handle's record of its live holds, by owner id. It is safe
// for concurrent use.
type Table struct {
	client redis.UniversalClient
	what   string // "<pkg>: <name>", for errors
	keep   Keep

	mu    sync.Mutex
	seq   uint64
	holds map[string]*Hold
	cur   *Hold // the hold Done and Err report on
}

// A Hold is one owner's hold taken through a handle: every count of it
// ends together, by the unlock of the last one or by loss. Its fields are
// guarded by its Table's mutex.
type Hold struct {
	owner string
	plain bool   // taken without an owner in ctx: a fresh id per acquisition
	seq   uint64 // order of creation among the handle's holds
	// releasing marks a plain hold whose Unlock is under way, so that a
	// concurrent Unlock picks the hold that another goroutine took since.
	releasing bool
	count     int
	token     int64
	done      chan struct{}
	err       error                     // why it ended: nil for Unlock, ErrLost otherwise
	cancels   []context.CancelCauseFunc // of the contexts Context made
	renew     *lease.Hold               // the watchdog's entry, nil with a fixed lease
	timer     *time.Timer               // the fixed lease's end, nil with the watchdog
}

// New returns the books of a handle whose holds are kept alive as keep
// says; what prefixes error messages, such as "mutex: orders".
func New(client redis.UniversalClient, what string, keep Keep) *Table {
	return &Table{client: client, what: what, keep: keep, holds: make(map[string]*Hold)}
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns the channel of the current hold, closed when it ends, or a
// closed channel if the handle never held.
func (t *Table) Done() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return closed
	}
	return t.cur.done
}

// Err returns why the current hold ended: nil while held or after Unlock,
// an error matching lockerr.ErrLost otherwise.
func (t *Table) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return nil
	}
	return t.cur.err
}

// Token returns the fencing token of the current hold, 0 if none is live.
func (t *Table) Token() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil || t.holds[t.cur.owner] != t.cur {
		return 0
	}
	return t.cur.token
}

// ClaimPlain picks the plain hold an Unlock without an owner releases and
// marks it releasing. A record can outlive its release in Redis for a
// moment (until Released runs, or a lost lease's timer fires) while another
// goroutine already took a new plain hold: the newest unclaimed one is the
// live one.
func (t *Table) ClaimPlain() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.newestPlainLocked(false)
	if e == nil {
		return "", false
	}
	e.releasing = true
	return e.owner, true
}

// CurrentPlain returns the owner id of the newest plain hold.
func (t *Table) CurrentPlain() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.newestPlainLocked(true)
	if e == nil {
		return "", false
	}
	return e.owner, true
}

func (t *Table) newestPlainLocked(claimed bool) *Hold {
	var best *Hold
	for _, e := range t.holds {
		if e.plain && (claimed || !e.releasing) && (best == nil || e.seq > best.seq) {
			best = e
		}
	}
	return best
}

// Acquired records an acquisition by owner id whose script was sent at
// started: a new hold, or one more count of a live one (which resets a
// fixed lease, as the script reset the TTL).
func (t *Table) Acquired(id string, plain bool, token int64, started time.Time) *Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.holds[id]; e != nil {
		e.count++
		e.token = token
		if e.timer != nil {
			e.timer.Reset(time.Until(started.Add(t.keep.Lease)))
		}
		t.cur = e
		return e
	}
	t.seq++
	e := &Hold{owner: id, plain: plain, seq: t.seq, count: 1, token: token, done: make(chan struct{})}
	if t.keep.Lease > 0 {
		e.timer = time.AfterFunc(time.Until(started.Add(t.keep.Lease)), func() {
			t.lose(e, fmt.Errorf("%s: %w: lease of %v expired", t.what, lockerr.ErrLost, t.keep.Lease))
		})
	} else {
		e.renew = &lease.Hold{
			Kind:  t.keep.Kind,
			Keys:  t.keep.Keys,
			Args:  t.keep.Args(id),
			Lease: t.keep.Watchdog,
			Sync:  t.keep.Sync,
			Lost:  func(err error) { t.lose(e, fmt.Errorf("%s: %w", t.what, err)) },
		}
		shared.For(t.client).Watchdog().Add(e.renew, started)
	}
	t.holds[id] = e
	t.cur = e
	return e
}

// Released applies a release script's answer for owner id: -1 not held
// (the hold, if recorded, was lost), 0 holds remain, 1 released.
func (t *Table) Released(id string, res int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.holds[id]
	switch {
	case e == nil:
	case res < 0:
		t.endLocked(e, fmt.Errorf("%s: %w: found not held on unlock", t.what, lockerr.ErrLost))
	case res == 0:
		e.count--
	default:
		t.endLocked(e, nil)
	}
}

// Abandoned applies an unlock by owner id whose outcome is unknown (the
// request failed without an answer). As Redisson does, the handle counts it
// as a release: a hold whose count drops to 0 ends, and its watchdog stops,
// so that a release that did not apply ends with the lease on the server
// instead of being renewed forever.
func (t *Table) Abandoned(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.holds[id]
	switch {
	case e == nil:
	case e.count > 1:
		e.count--
		e.releasing = false
	default:
		t.endLocked(e, nil)
	}
}

func (t *Table) lose(e *Hold, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holds[e.owner] == e {
		t.endLocked(e, err)
	}
}

func (t *Table) endLocked(e *Hold, err error) {
	delete(t.holds, e.owner)
	if e.renew != nil {
		shared.For(t.client).Watchdog().Remove(e.renew)
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.err = err
	close(e.done)
	for _, cancel := range e.cancels {
		cancel(err)
	}
	e.cancels = nil
}

// Context returns a copy of parent that is cancelled when h ends: with
// context.Canceled as its cause after an unlock, or with the error that
// says why it was lost (matching lockerr.ErrLost).
func (t *Table) Context(parent context.Context, h *Hold) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-h.done:
		cancel(h.err)
	default:
		h.cancels = append(h.cancels, cancel)
	}
	return ctx
}
