package main

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// A detection tells the kind of a name from every key latchkey and
// Redisson keep under it and beside it, and the subscribers of its
// channels:
//
//   - a hash with a mode field is a read-write lock; another hash of owner
//     fields a lock: a fair lock when a fair queue, deadlines or
//     heartbeats are beside it, or the fair lock's fencing counter
//     without the mutex's; a mutex when latchkey's mutex queue, grant or
//     fencing counter (which latchkey's mutex draws at each acquisition,
//     and RFencedLock too), an election's record, or a subscriber on the
//     lock's shared channel (where RLock's waiters wait; a fair lock's
//     wait on channels of their own) is there; else kindEitherLock, for a
//     Redisson RLock and an uncontended RFairLock write the same hash;
//   - an integer string is a permit semaphore with the permit zset beside
//     it, or latchkey waiters' entries of a permit semaphore; a semaphore
//     with a semaphore's entries or grants, or a subscriber on the
//     semaphores' channel; a latch with a subscriber on the latch's
//     channel; otherwise kindCounter, bare when nothing at all is beside
//     it (no queue, no listeners' or turn key either), which ls leaves
//     out;
//   - with nothing under the name itself, waiters queued or a fencing
//     counter still make it the kind they belong to.
type detection struct {
	c          *conn
	st         *State
	n          names
	typ        *redis.StatusCmd
	mode       *redis.BoolCmd
	exists     map[string]*redis.IntCmd
	semEntries *redis.StringSliceCmd
	fields     *redis.MapStringStringCmd // a hash's
	value      *redis.StringCmd          // a string's
}

// detectStep detects st's kind, then checks it against asked, the kind
// the command line gave ("" for none), which it takes instead if it is of
// the same family (a lock's, a read-write lock's, an integer's), and goes
// on with body. A kind of another family is refused, saying what the key
// holds.
func detectStep(c *conn, st *State, asked string, body func() step) step {
	d := &detection{c: c, st: st, n: namesOf(st.Name), exists: map[string]*redis.IntCmd{}}
	decided := func(kind string, bare bool) (step, error) {
		st.Kind, st.bare = kind, bare
		if asked != "" {
			if err := d.check(asked); err != nil {
				return nil, err
			}
			st.Kind, st.bare = asked, false
		}
		return body(), nil
	}
	return func(r *round) func() (step, error) {
		d.queue(r)
		return func() (step, error) {
			if err := failed(c, st.Name, d.typ); err != nil {
				return nil, err
			}
			if d.typ.Val() == "" {
				// TYPE had no answer: the pipeline failed as a whole (no
				// connection, or no master from the sentinels), and
				// go-redis may leave that error out of the commands.
				return nil, c.keyErr(st.Name, cmp.Or(r.err, errNoReply))
			}
			if kind, done := d.byMarkers(); done {
				return decided(kind, false)
			}
			return d.readValue(decided), nil
		}
	}
}

// queue asks for the key's type and whether each key that may lie beside
// it exists.
func (d *detection) queue(r *round) {
	n := d.n
	d.typ = r.p.Type(r.ctx, d.st.Name)
	d.mode = r.p.HExists(r.ctx, d.st.Name, "mode")
	for _, k := range []string{n.lock.FairQueue, n.lock.FairDeadlines, n.lock.Heartbeats, n.lock.Queue, n.lock.Grant,
		n.sem.Leases, n.rw.Writers, n.lock.Token, n.lock.FairToken, n.rw.Token, n.election,
		n.sem.Queue, n.sem.Grants, n.sem.Listeners, n.sem.Turn} {
		d.exists[k] = r.p.Exists(r.ctx, k)
	}
	d.semEntries = r.p.LRange(r.ctx, n.sem.Queue, 0, maxEntries-1)
}

func (d *detection) has(k string) bool { return d.exists[k].Val() == 1 }

// fair reports whether a fair lock's keys are beside the name.
func (d *detection) fair() bool {
	n := d.n
	return d.has(n.lock.FairQueue) || d.has(n.lock.FairDeadlines) || d.has(n.lock.Heartbeats) ||
		d.has(n.lock.FairToken) && !d.has(n.lock.Token)
}

// byMarkers decides the kind of a name that is no hash or string of its
// own, or a read-write lock, from its type and the keys beside it.
func (d *detection) byMarkers() (kind string, done bool) {
	n := d.n
	switch d.typ.Val() {
	case "hash":
		if d.mode.Val() {
			return kindRWLock, true
		}
		return "", false
	case "string":
		return "", false
	case "none":
		switch {
		case d.has(n.lock.Queue):
			return kindMutex, true
		case d.fair(): // queued for, or free with its counter left from earlier holds
			return kindFairLock, true
		case d.has(n.rw.Writers):
			return kindRWLock, true
		case d.has(n.sem.Leases):
			return kindPermits, true
		case entriesKind(d.semEntries.Val()) != "":
			return entriesKind(d.semEntries.Val()), true
		// Free, its fencing counter left from earlier holds.
		case d.has(n.lock.Token):
			return kindMutex, true
		case d.has(n.rw.Token):
			return kindRWLock, true
		}
		return kindNone, true
	}
	return kindOther, true
}

// readValue is the step that reads a hash's fields or a string's value,
// and decides from them and, where it takes them, the listeners.
func (d *detection) readValue(decided func(string, bool) (step, error)) step {
	return func(r *round) func() (step, error) {
		hash := d.typ.Val() == "hash"
		if hash {
			d.fields = r.p.HGetAll(r.ctx, d.st.Name)
		} else {
			d.value = r.p.Get(r.ctx, d.st.Name)
		}
		return func() (step, error) {
			var kind string
			var channels []string
			var cmd redis.Cmder = d.value
			if hash {
				cmd = d.fields
				kind, channels = d.lock()
			} else {
				kind, channels = d.counter()
			}
			switch {
			case kind == "err":
				return nil, failed(d.c, d.st.Name, cmd)
			case kind != "":
				return decided(kind, false)
			}
			return d.byListeners(channels, decided), nil
		}
	}
}

// lock decides the kind of a hash: "" if the listeners on channels must
// say, "err" if the read failed.
func (d *detection) lock() (kind string, channels []string) {
	n := d.n
	if err := d.fields.Err(); err != nil {
		return "err", nil // not "other": a read cut short (a watch's, at its end) is no answer
	}
	if !lockFields(d.fields.Val()) {
		return kindOther, nil
	}
	switch {
	case d.fair() && !d.has(n.lock.Queue):
		return kindFairLock, nil
	case d.has(n.lock.Queue) || d.has(n.lock.Grant) || d.has(n.lock.Token) || d.has(n.election):
		return kindMutex, nil
	}
	return "", []string{n.lock.Channel}
}

// counter decides the kind of a string, as lock does.
func (d *detection) counter() (kind string, channels []string) {
	n := d.n
	if err := d.value.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return "err", nil
	}
	if _, err := strconv.ParseInt(d.value.Val(), 10, 64); err != nil {
		return kindOther, nil
	}
	switch {
	case d.has(n.sem.Leases):
		return kindPermits, nil
	case entriesKind(d.semEntries.Val()) != "":
		return entriesKind(d.semEntries.Val()), nil
	case d.has(n.sem.Grants):
		return kindSemaphore, nil
	}
	return "", []string{n.sem.Channel, n.latchChannel}
}

// byListeners is the step that counts the listeners on channels and
// decides by them.
func (d *detection) byListeners(channels []string, decided func(string, bool) (step, error)) step {
	return func(r *round) func() (step, error) {
		r.count = append(r.count, channels...)
		return func() (step, error) {
			if r.countErr != nil {
				return nil, d.c.keyErr(d.st.Name, r.countErr)
			}
			n := d.n
			subs := r.counts
			if d.typ.Val() == "hash" {
				if subs[n.lock.Channel] > 0 {
					return decided(kindMutex, false)
				}
				return decided(kindEitherLock, false)
			}
			switch {
			case subs[n.sem.Channel] > 0:
				return decided(kindSemaphore, false)
			case subs[n.latchChannel] > 0:
				return decided(kindLatch, false)
			}
			bare := !d.has(n.sem.Queue) && !d.has(n.sem.Listeners) && !d.has(n.sem.Turn)
			return decided(kindCounter, bare)
		}
	}
}

// errNoReply stands for the error of a pipeline that failed without one.
var errNoReply = errors.New("no reply")

// maxEntries bounds how many semaphore queue entries detect reads to tell
// a semaphore's from a permit semaphore's.
const maxEntries = 16

// lockFields reports whether every field of a hash is an owner id with an
// integer hold count, as in a Redisson lock.
func lockFields(m map[string]string) bool {
	for f, v := range m {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil || !ownerShaped(f) {
			return false
		}
	}
	return true
}

// family groups the kinds that read the same keys alike: a -kind of
// another family than the key's is a mistake.
func family(kind string) string {
	switch kind {
	case kindMutex, kindFairLock, kindEitherLock:
		return "lock"
	case kindSemaphore, kindPermits, kindLatch, kindCounter:
		return "integer"
	}
	return kind
}

// check refuses asked, a -kind, for a name detected as another family's.
// Nothing under the name takes any kind.
func (d *detection) check(asked string) error {
	got := d.st.Kind
	if got == kindNone || family(got) == family(asked) {
		return nil
	}
	holds := "a " + d.typ.Val()
	switch got {
	case kindOther:
		holds += ", which is no synchronizer's layout"
	default:
		holds += fmt.Sprintf(", which reads as a %s", got)
	}
	return refused("-kind %s: key %q on %s holds %s: pass -kind %s, or leave -kind out",
		asked, d.st.Name, d.c.server, holds, suggest(got))
}

// suggest is the -kind to pass for a detected kind.
func suggest(kind string) string {
	switch kind {
	case kindEitherLock:
		return kindMutex
	case kindCounter:
		return "semaphore or -kind countdownlatch"
	case kindOther:
		return "of the synchronizer meant, on the right name"
	}
	return kind
}
