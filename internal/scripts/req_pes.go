package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the permit semaphore's scripts (fragment/pes.lua): a
// Redisson RPermitExpirableSemaphore, with latchkey's waiter queue beside
// it. Those of a change, a delete and a dequeue have the fields of the
// semaphore's. The watchdog's renewal (pes_renew) is a Renewal.

var (
	pesAcquire = Get("pes_acquire")
	pesRelease = Get("pes_release")
	pesDequeue = Get("pes_dequeue")
	pesSet     = Get("pes_set")
	pesDelete  = Get("pes_delete")
	pesCount   = Get("pes_count")
	pesLease   = Get("pes_lease")
)

// pesFirst writes the first three KEYS of the permit semaphore's scripts
// (see fragment/pes.lua), which a script that only reads or sets leases
// takes.
func (b *build) pesFirst(l keys.Semaphore) {
	b.key("count", l.Name)
	b.key("timeout zset", l.Leases)
	b.key("Redisson's channel", l.Channel)
}

// pesQueued writes the KEYS of the permit semaphore's queued scripts, and
// the inputs they take first.
func (b *build) pesQueued(l keys.Semaphore) {
	b.pesFirst(l)
	b.key("queue", l.Queue)
	b.key("deadlines", l.Deadlines)
	b.key("Hub channel prefix", l.Hubs)
	b.key("listeners", l.Listeners)
	b.key("turn", l.Turn)
	b.queued("queue entry life", QueueLife)
}

// PermanentLease is the lease end Redisson stores for a permit without a
// lease.
const PermanentLease = 922337203685477

// PesAcquire takes N permits, whose ids follow from First, or the grant
// of them, or joins the queue; with Try it tries once, leaving no trace.
type PesAcquire struct {
	Sem      keys.Semaphore
	Entry    string // <hub id>/<permits>/<first id in hex>; "" for a try
	LeaseEnd int64  // ms since the epoch, the client's clock, or PermanentLease
	Try      bool
	Ear      time.Duration // how long the waiter's Hub may listen after it left (handoff.Ear)
	Listens  bool          // the waiter listens on Redisson's channel already
	First    string        // the first permit's id, 16 raw bytes
	N        int
	Record   string // the acquisition's record, shared by its attempts
}

func (r PesAcquire) Request() Request {
	b := begin(pesAcquire, 8, 12)
	b.pesQueued(r.Sem)
	b.arg("waiter entry", r.Entry)
	b.arg("the lease end of the permits", r.LeaseEnd)
	b.flag(`"1" to try once`, r.Try)
	b.ms("how long, in ms, the waiter's Hub may listen", r.Ear)
	b.flag(`"1" if the waiter listens there already`, r.Listens)
	b.arg("the first permit id", r.First)
	b.arg("how many permits", r.N)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// PesRelease releases the permits IDs (16 raw bytes each), all or none
// if Strict, and hands them to the head of the queue.
type PesRelease struct {
	Sem      keys.Semaphore
	Strict   bool
	YieldFor time.Duration // handoff.Yield
	IDs      []string
	Record   string
}

func (r PesRelease) Request() Request {
	b := begin(pesRelease, 8, 7+len(r.IDs))
	b.pesQueued(r.Sem)
	b.flag(`"1": all or nothing`, r.Strict)
	b.ms("ms that a release a Redisson client may wait for", r.YieldFor)
	for _, id := range r.IDs {
		b.arg("permit ids", id)
	}
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// PesDequeue is SemDequeue for the permit semaphore.
type PesDequeue SemDequeue

func (r PesDequeue) Request() Request { return SemDequeue(r).write(pesDequeue, (*build).pesQueued) }

// PesSet is SemSet for the permit semaphore, whose SetTo sets the permits
// in all, held ones included.
type PesSet SemSet

func (r PesSet) Request() Request { return SemSet(r).write(pesSet, (*build).pesQueued) }

// PesDelete is SemDelete for the permit semaphore.
type PesDelete SemDelete

func (r PesDelete) Request() Request { return SemDelete(r).write(pesDelete, (*build).pesQueued) }

// PesCount counts the permits, available and held, first returning
// expired ones to the pool, which matters nothing if done twice.
type PesCount struct{ Sem keys.Semaphore }

func (r PesCount) Request() Request {
	b := begin(pesCount, 3, 5)
	b.pesFirst(r.Sem)
	b.queued("queue entry life", QueueLife)
	return b.done()
}

// PesLease reads the lease of the permit ID (16 raw bytes), or with End
// sets it first.
type PesLease struct {
	Sem keys.Semaphore
	ID  string
	End int64 // the new lease end, as PesAcquire's LeaseEnd; 0 only reads
}

func (r PesLease) Request() Request {
	b := begin(pesLease, 3, 7)
	b.pesFirst(r.Sem)
	b.queued("queue entry life", QueueLife)
	b.arg("permit id", r.ID)
	if r.End == 0 {
		b.arg("the new lease end", "")
	} else {
		b.arg("the new lease end", r.End)
	}
	b.synced()
	return b.done()
}
