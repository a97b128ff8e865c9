package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the semaphore's scripts (fragment/sem.lua): a Redisson
// RSemaphore count, with latchkey's waiter queue and grants beside it.
// sem_expire and sem_ttl serve the permit semaphore too.

var (
	semAcquire = Get("sem_acquire")
	semRelease = Get("sem_release")
	semDequeue = Get("sem_dequeue")
	semSet     = Get("sem_set")
	semDelete  = Get("sem_delete")
	semRestock = Get("sem_restock")
	semDrain   = Get("sem_drain")
	semCount   = Get("sem_count")
	semExpire  = Get("sem_expire")
	semTTL     = Get("sem_ttl")
)

// semQueued writes the KEYS of the semaphore's queued scripts (see
// fragment/sem.lua), and the inputs they take first.
func (b *build) semQueued(l keys.Semaphore) {
	b.key("count", l.Name)
	b.key("Redisson's channel", l.Channel)
	b.key("queue", l.Queue)
	b.key("deadlines", l.Deadlines)
	b.key("grants", l.Grants)
	b.key("Hub channel prefix", l.Hubs)
	b.key("listeners", l.Listeners)
	b.key("turn", l.Turn)
	b.queued("queue entry life", QueueLife)
}

// SemAcquire takes permits of the semaphore, or its grant of them, or
// joins its queue; with Try it tries once, leaving no trace.
type SemAcquire struct {
	Sem     keys.Semaphore
	Entry   string // <hub id>/<permits>/<key>; "" for a try
	Permits int64
	Try     bool
	Ear     time.Duration // how long the waiter's Hub may listen after it left (handoff.Ear)
	Listens bool          // the waiter listens on Redisson's channel already
	Record  string        // the acquisition's record, shared by its attempts
}

func (r SemAcquire) Request() Request {
	b := begin(semAcquire, 8, 10)
	b.semQueued(r.Sem)
	b.arg("waiter entry", r.Entry)
	b.arg("permits to acquire", r.Permits)
	b.flag(`"1" to try once`, r.Try)
	b.ms("how long, in ms, the waiter's Hub may listen", r.Ear)
	b.flag(`"1" if the waiter listens there already`, r.Listens)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// SemRelease gives permits back and hands them to the head of the queue.
type SemRelease struct {
	Sem      keys.Semaphore
	Permits  int64
	YieldFor time.Duration // handoff.Yield
	Record   string
}

func (r SemRelease) Request() Request {
	b := begin(semRelease, 8, 7)
	b.semQueued(r.Sem)
	b.arg("permits to release", r.Permits)
	b.ms("ms that a release a Redisson client may wait for", r.YieldFor)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// SemDequeue takes a waiter that gave up out of the queue, giving back a
// grant that reached it too late.
type SemDequeue struct {
	Sem   keys.Semaphore
	Entry string
	Ear   time.Duration // how long the waiter's Hub may listen after it left (handoff.Ear)
}

func (r SemDequeue) Request() Request { return r.write(semDequeue, (*build).semQueued) }

// write makes r's request of script s, whose KEYS and inputs queued
// writes.
func (r SemDequeue) write(s *Script, queued func(*build, keys.Semaphore)) Request {
	b := begin(s, 8, 7)
	queued(&b, r.Sem)
	b.arg("the waiter's entry", r.Entry)
	b.ms("how long, in ms, the waiter's Hub may listen", r.Ear)
	b.synced()
	return b.done()
}

// The changes of SemSet and PesSet.
const (
	SetAdd = "add"    // the count goes up by the permits, which may be negative
	SetTo  = "set"    // the count becomes the permits
	TrySet = "tryset" // the same, if the semaphore has no count yet
)

// SemSet changes the semaphore's count, handing what it frees to the head
// of the queue.
type SemSet struct {
	Sem     keys.Semaphore
	Change  string // SetAdd, SetTo or TrySet
	Permits int64
	TTL     time.Duration // for TrySet: the semaphore's TTL, or 0 for none
	Record  string
}

func (r SemSet) Request() Request { return r.write(semSet, (*build).semQueued) }

func (r SemSet) write(s *Script, queued func(*build, keys.Semaphore)) Request {
	b := begin(s, 8, 8)
	queued(&b, r.Sem)
	b.arg("the change", r.Change)
	b.arg("permits", r.Permits)
	b.ms("for tryset, the semaphore's TTL", r.TTL)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// SemDelete deletes the semaphore and every key beside it, waking every
// waiter.
type SemDelete struct {
	Sem    keys.Semaphore
	Record string
}

func (r SemDelete) Request() Request { return r.write(semDelete, (*build).semQueued) }

func (r SemDelete) write(s *Script, queued func(*build, keys.Semaphore)) Request {
	b := begin(s, 8, 5)
	queued(&b, r.Sem)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// SemRestock gives back to the count the grants whose grace is over.
type SemRestock struct{ Sem keys.Semaphore }

func (r SemRestock) Request() Request {
	b := begin(semRestock, 8, 5)
	b.semQueued(r.Sem)
	b.synced()
	return b.done()
}

// SemDrain takes every available permit.
type SemDrain struct {
	Sem    keys.Semaphore
	Record string
}

func (r SemDrain) Request() Request {
	b := begin(semDrain, 1, 0)
	b.key("semaphore name", r.Sem.Name)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// SemCount reads the permits available. It changes nothing.
type SemCount struct{ Sem keys.Semaphore }

func (r SemCount) Request() Request {
	b := begin(semCount, 2, 0)
	b.key("semaphore name", r.Sem.Name)
	b.key("latchkey_semaphore_grant", r.Sem.Grants)
	return b.done()
}

// held returns the key that holds a semaphore's permits beside its count:
// a permit semaphore's leases, or a semaphore's grants.
func held(l keys.Semaphore, leases bool) string {
	if leases {
		return l.Leases
	}
	return l.Grants
}

// SemExpire sets a semaphore, or with Leases a permit semaphore, to
// expire In from now.
type SemExpire struct {
	Sem    keys.Semaphore
	Leases bool // a permit semaphore's: its leases hold the permits
	In     time.Duration
}

func (r SemExpire) Request() Request {
	b := begin(semExpire, 6, 1)
	b.key("semaphore name", r.Sem.Name)
	b.key("the keys that hold permits", held(r.Sem, r.Leases))
	b.key("latchkey_semaphore_queue", r.Sem.Queue)
	b.key("latchkey_semaphore_timeout", r.Sem.Deadlines)
	b.key("latchkey_semaphore_listeners", r.Sem.Listeners)
	b.key("latchkey_semaphore_turn", r.Sem.Turn)
	b.ms("ms from now", r.In)
	b.synced()
	return b.done()
}

// SemTTL reads how long a semaphore, or with Leases a permit semaphore,
// lives. It changes nothing.
type SemTTL struct {
	Sem    keys.Semaphore
	Leases bool
}

func (r SemTTL) Request() Request {
	b := begin(semTTL, 2, 0)
	b.key("semaphore name", r.Sem.Name)
	b.key("the semaphore's grants", held(r.Sem, r.Leases))
	return b.done()
}
