// Package hold keeps a lock handle's books on its holds: which owners hold
// through it and how many times, which hold Done and Err report on, what
// keeps each hold alive or declares it lost (a Keeper), and which plain
// hold an Unlock without an owner releases. Every lock keeps its books here:
// mutex and fairlock through lockcore, the read-write lock with a class per
// side, RedLock with a Keeper of its own.
package hold

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Any, as a class, stands for every class of hold.
const Any = -1

// A Table is one handle's record of its live holds, by key: the owner id,
// or for a read-write lock its hash field. It is safe for concurrent use.
type Table struct {
	// what kind of primitive, and called what: errors begin with them,
	// and the hooks of client hear of holds' ends as them (see Observe)
	kind, name string
	client     redis.UniversalClient

	mu    sync.Mutex
	seq   uint64
	holds set
	cur   current
	lost  map[string]struct{} // keys whose last hold was lost, until held again
}

// maxLost bounds how many lost holds a Table remembers (see WasLost).
const maxLost = 1024

// A Hold is one owner's hold of one class taken through a handle: every
// count of it ends together, by the release of the last one or by loss.
// Its fields are guarded by its Table's mutex.
type Hold struct {
	key   string
	Owner string
	class int
	plain bool   // taken without an owner in ctx: a fresh id per acquisition
	seq   uint64 // order of the latest acquisition among the handle's holds
	// releasing marks a plain hold whose unlock is under way, so that a
	// concurrent unlock picks another.
	releasing bool
	count     int
	uncertain bool // the server may count more than count (see Uncertain)
	token     int64
	keep      Keeping
	ended     bool
	done      chan struct{}             // closed when it ends; made by the first Done
	err       error                     // why it ended: nil for an unlock, ErrLost otherwise
	cancels   []context.CancelCauseFunc // of the contexts Context made
}

// New returns empty books of a primitive of kind called name (none for
// MultiLock), which prefix error messages, as in "mutex: orders". The
// books made on loss alone are made then: a handle made per call (a lock
// per order) pays for what it uses.
func New(kind, name string) *Table {
	t := new(Table)
	t.Init(kind, name)
	return t
}

// Init readies t, a Table that lives in a handle of its own rather than
// New's allocation, for kind and name. Call it before any other method.
func (t *Table) Init(kind, name string) { t.kind, t.name = kind, name }

// what prefixes t's errors.
func (t *Table) what() string {
	if t.name == "" {
		return t.kind
	}
	return t.kind + ": " + t.name
}

// Observe makes the ends of t's holds reported to the hooks of c (see
// latchkey.Hooks: Released, Lost). Call it before any hold is taken.
func (t *Table) Observe(c redis.UniversalClient) { t.client = c }

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns the channel of the current hold of class c (or Any), closed
// when it ends, or a closed channel if the handle never held.
func (t *Table) Done(c int) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.cur.of(c)
	switch {
	case h == nil || h.ended:
		return closed
	case h.done == nil:
		h.done = make(chan struct{})
	}
	return h.done
}

// Err returns why the current hold of class c (or Any) ended: nil while
// held or after its release, an error matching lockerr.ErrLost otherwise.
func (t *Table) Err(c int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.cur.of(c); h != nil {
		return h.err
	}
	return nil
}

// Token returns the fencing token of the current hold, 0 if none is live.
func (t *Table) Token() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.cur.of(Any); h != nil && t.holds.get(h.key) == h {
		return h.token
	}
	return 0
}

// Current returns the live hold Done reports on for class c, or nil.
func (t *Table) Current(c int) *Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.cur.of(c); h != nil && t.holds.get(h.key) == h {
		return h
	}
	return nil
}

// Until returns the end of the known validity of the live hold Done
// reports on for class c (see Keeping.Until), or the zero time if none.
func (t *Table) Until(c int) time.Time {
	if h := t.Current(c); h != nil {
		return h.keep.Until()
	}
	return time.Time{}
}

// Get returns the live hold under key, or nil.
func (t *Table) Get(key string) *Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holds.get(key)
}

// ClaimPlain picks the plain hold of class c that an unlock without an
// owner releases, marks it releasing, and returns its owner. A record can
// outlive its release in Redis for a moment (until the release is recorded,
// or a lost lease's timer fires) while another goroutine already took a new
// plain hold: the newest unclaimed one is the live one.
func (t *Table) ClaimPlain(c int) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.newestPlainLocked(c, false)
	if h == nil {
		return "", false
	}
	h.releasing = true
	return h.Owner, true
}

// Claim marks the owner's hold under key releasing if the unlock about to
// be sent takes its last count (see Lose); the unlock's answer clears the
// mark (Decremented, Abandoned) or ends the hold.
func (t *Table) Claim(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil && h.count == 1 {
		h.releasing = true
	}
}

// CurrentPlain returns the owner id of the newest plain hold of class c.
func (t *Table) CurrentPlain(c int) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.newestPlainLocked(c, true)
	if h == nil {
		return "", false
	}
	return h.Owner, true
}

func (t *Table) newestPlainLocked(c int, claimed bool) *Hold {
	var best *Hold
	for h := range t.holds.all {
		if h.plain && (c == Any || h.class == c) && (claimed || !h.releasing) && (best == nil || h.seq > best.seq) {
			best = h
		}
	}
	return best
}

// Acquired records an acquisition under key by owner id, of class c (0 or 1), whose
// request was sent at started: a new hold, kept by k, or one more count of
// a live one (its keep is told: a fixed lease restarts, as the script reset
// the TTL).
func (t *Table) Acquired(key, id string, c int, plain bool, token int64, started time.Time, k Keeper) *Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	if h := t.holds.get(key); h != nil {
		h.count++
		h.token = token
		h.seq = t.seq
		h.keep.Again(started)
		t.cur.set(c, h)
		return h
	}
	delete(t.lost, key)
	h := &Hold{key: key, Owner: id, class: c, plain: plain, seq: t.seq, count: 1, token: token}
	h.keep = k.Keep(id, started, func(err error) { t.Lose(h, fmt.Errorf("%s: %w", t.what(), err)) })
	t.holds.add(h)
	t.cur.set(c, h)
	return h
}

// WasLost reports whether the last hold under key, an owner's, ended by
// loss and none was taken since: an unlock by its owner then reports it
// not held, as Done and Err said, even if the release found it still there
// to clean up.
func (t *Table) WasLost(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.lost[key]
	return ok
}

// Again counts one more acquisition, sent at started, of the live hold
// under key, if there is one, and reports whether there was: a lock whose
// re-entries the handle counts alone (RedLock's nodes hold once).
func (t *Table) Again(key string, started time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.holds.get(key)
	if h == nil {
		return false
	}
	t.seq++
	h.count++
	h.seq = t.seq
	h.keep.Again(started)
	t.cur.set(h.class, h)
	return true
}
