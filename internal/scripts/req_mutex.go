package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the mutex's scripts (fragment/mutex.lua): a Redisson
// RLock hash, with latchkey's waiter queue beside it. A RedLock's queue
// node runs them too.

var (
	mutexAcquire      = Get("mutex_acquire")
	mutexTakeFree     = Get("mutex_take_free")
	mutexTakeOwner    = Get("mutex_take_owner")
	mutexRelease      = Get("mutex_release")
	mutexReleaseAlone = Get("mutex_release_alone")
	mutexDequeue      = Get("mutex_dequeue")
	mutexForce        = Get("mutex_force")
	mutexDelete       = Get("mutex_delete")
)

// mutexKeys writes the KEYS of every mutex script (fragment/mutex_keys.lua).
func (b *build) mutexKeys(l keys.Lock) {
	x := boxesOf(l)
	b.boxedKey("lock hash", l.Name, x.Name)
	b.boxedKey("fencing counter", l.Token, x.Token)
	b.boxedKey("queue", l.Queue, x.Queue)
	b.boxedKey("deadlines", l.Deadlines, x.Deadlines)
	b.boxedKey("Redisson's channel", l.Channel, x.Channel)
	b.boxedKey("Hub channel prefix", l.Hubs, x.Hubs)
	b.boxedKey("grant", l.Grant, x.Grant)
}

// boxesOf returns l's boxed keys, or none (see keys.Lock.Box).
func boxesOf(l keys.Lock) *keys.Boxes {
	if l.Boxes != nil {
		return l.Boxes
	}
	return &unboxed
}

var unboxed keys.Boxes

// Reentry is how an owner acquires (see mutex_acquire.lua's ARGV[9]).
const (
	Fresh     = "0" // an id fresh for this one acquisition
	Reentrant = "1" // an owner that may re-enter
	Holding   = "2" // an owner that holds the lock through the caller's handle
)

// Yield says whether a release, a dequeue or a forced unlock leaves a
// free lock to Redisson's waiters that may have heard it first (see
// fragment/mutex.lua).
type Yield string

const (
	NoYield   Yield = "0" // a RedLock's queue node: its head listens on Redisson's channel
	YieldLock Yield = "1"
)

// MutexAcquire takes the mutex, or joins its queue, or with Try tries
// once, leaving no trace.
type MutexAcquire struct {
	Lock         keys.Lock
	Owner        string
	Entry        string // <hub id>/<letter key>
	Lease        time.Duration
	Reentry      string // Fresh, Reentrant or Holding
	Queued       bool   // an earlier attempt of the call may have queued it
	Try          bool
	HeardRelease bool          // a Redisson client's release came since the latest attempt
	YieldFor     time.Duration // handoff.Yield
	Record       string        // the acquisition's record, shared by its attempts
}

func (r MutexAcquire) Request() Request {
	b := begin(mutexAcquire, 7, 10)
	b.mutexKeys(r.Lock)
	b.queued("queue entry life", QueueLife)
	b.arg("owner id", r.Owner)
	b.arg("waiter entry", r.Entry)
	b.ms("lease in ms", r.Lease)
	b.arg("four flags", acquireFlags(r.Reentry, r.Queued, r.Try, r.HeardRelease))
	b.ms("the yield in ms", r.YieldFor)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// MutexTakeFree is a plain Lock's first try: it takes a free lock for a
// fresh owner id, which needs no record, or answers the holder's PTTL.
type MutexTakeFree struct {
	Lock  keys.Lock
	Owner string
	Lease time.Duration
}

func (r MutexTakeFree) Request() Request {
	b := begin(mutexTakeFree, 3, 2)
	x := boxesOf(r.Lock)
	b.boxedKey("lock hash", r.Lock.Name, x.Name)
	b.boxedKey("fencing counter", r.Lock.Token, x.Token)
	b.boxedKey("grant", r.Lock.Grant, x.Grant)
	b.arg("owner id", r.Owner)
	b.ms("lease in ms", r.Lease)
	b.synced()
	return b.done()
}

// MutexTakeOwner is the first try of a Lock by a re-entrant owner that
// holds nothing through its handle: it takes a free lock, recorded
// against its call's record, or answers TakeOwnerNot.
type MutexTakeOwner struct {
	Lock   keys.Lock
	Owner  string
	Lease  time.Duration
	Record string
}

// TakeOwnerNot is MutexTakeOwner's answer when the lock was not free, or
// the request ran before: MutexAcquire settles those.
const TakeOwnerNot = -1

func (r MutexTakeOwner) Request() Request {
	b := begin(mutexTakeOwner, 3, 2)
	x := boxesOf(r.Lock)
	b.boxedKey("lock hash", r.Lock.Name, x.Name)
	b.boxedKey("fencing counter", r.Lock.Token, x.Token)
	b.boxedKey("grant", r.Lock.Grant, x.Grant)
	b.arg("owner id", r.Owner)
	b.ms("lease in ms", r.Lease)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// MutexRelease releases one hold of Owner and hands a free lock on. It
// answers -1 (not held), 0 (holds remain), 1 (released) or
// ReleasedQueued.
type MutexRelease struct {
	Lock      keys.Lock
	Owner     string
	Lease     time.Duration // restored when holds remain
	Reentrant bool
	Yield     Yield
	Record    string
}

func (r MutexRelease) Request() Request {
	b := begin(mutexRelease, 7, 8)
	b.mutexKeys(r.Lock)
	b.queued("queue entry life", QueueLife)
	b.arg("owner id", r.Owner)
	b.ms("lease in ms", r.Lease)
	b.arg("two flags", releaseFlags(r.Reentrant, r.Yield))
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// MutexReleaseAlone is MutexRelease's fast path: it answers ReleaseQueued,
// having done nothing, when waiters queue.
type MutexReleaseAlone struct {
	Lock      keys.Lock
	Owner     string
	Lease     time.Duration
	Reentrant bool
	Record    string
}

// ReleaseQueued is MutexReleaseAlone's answer when waiters queue.
const ReleaseQueued = -2

// ReleasedQueued is MutexRelease's answer when it released the lock while
// waiters queued, and handed it on: a release as 1 is, which tells the
// caller that the lock is contended.
const ReleasedQueued = 2

func (r MutexReleaseAlone) Request() Request {
	b := begin(mutexReleaseAlone, 4, 4)
	x := boxesOf(r.Lock)
	b.boxedKey("lock hash", r.Lock.Name, x.Name)
	b.boxedKey("grant", r.Lock.Grant, x.Grant)
	b.boxedKey("deadlines", r.Lock.Deadlines, x.Deadlines)
	b.boxedKey("Redisson's channel", r.Lock.Channel, x.Channel)
	b.arg("owner id", r.Owner)
	b.ms("lease in ms", r.Lease)
	b.flag(`"1" if the owner may re-enter`, r.Reentrant)
	b.input("PUBLISH or SPUBLISH", Pub)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// MutexDequeue takes a waiter that gave up out of the queue, giving a
// grant that reached it too late to the next.
type MutexDequeue struct {
	Lock  keys.Lock
	Entry string
	Yield Yield
}

func (r MutexDequeue) Request() Request {
	b := begin(mutexDequeue, 7, 7)
	b.mutexKeys(r.Lock)
	b.queued("queue entry life", QueueLife)
	b.arg("the waiter's entry", r.Entry)
	b.arg(`"1" to yield to Redisson's waiters`, string(r.Yield))
	b.synced()
	return b.done()
}

// MutexForce deletes the mutex whoever holds it (ForceUnlock).
type MutexForce struct {
	Lock  keys.Lock
	Yield Yield
}

func (r MutexForce) Request() Request {
	b := begin(mutexForce, 8, 6)
	b.mutexKeys(r.Lock)
	b.key("latchkey_lock__forced", r.Lock.Forced)
	b.queued("queue entry life", QueueLife)
	b.arg(`"1" to yield to Redisson's waiters`, string(r.Yield))
	return b.done()
}

// MutexDelete deletes every key of a mutex nobody holds.
type MutexDelete struct{ Lock keys.Lock }

func (r MutexDelete) Request() Request {
	b := begin(mutexDelete, 7, 5)
	b.mutexKeys(r.Lock)
	b.queued("queue entry life", QueueLife)
	b.synced()
	return b.done()
}

// QueueLife is how long a waiter's queue entry lives unless it attempts
// again: three times the wait loop's backstop (wait.Backstop), at which
// waiters attempt at the latest, refreshing it.
const QueueLife = 15 * time.Second
