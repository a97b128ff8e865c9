package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the read-write lock's scripts: a Redisson RReadWriteLock
// hash, with latchkey's waiting writers' marker and epoch beside it.

var (
	rwReadAcquire   = Get("rw_read_acquire")
	rwWriteAcquire  = Get("rw_write_acquire")
	rwRelease       = Get("rw_release")
	rwWriteWithdraw = Get("rw_write_withdraw")
)

// writeField is the hash field of owner's write holds.
func writeField(owner string) string { return owner + ":write" }

// rwAcquireKeys writes the KEYS that both acquisitions take first.
func (b *build) rwAcquireKeys(l keys.RWLock, owner string) {
	b.key("lock hash name", l.Name)
	b.key("{name}:<owner>:rwlock_timeout", l.ReadTimeouts(owner))
	b.key("latchkey_rwlock_writers:{name}", l.Writers)
}

// RWReadAcquire takes one read hold.
type RWReadAcquire struct {
	Lock      keys.RWLock
	Owner     string
	Lease     time.Duration
	Reentrant bool
	// Epoch is the epoch the call was first held back in, or "".
	Epoch     string
	EpochLife time.Duration // how long the epoch lives after a reader was held back
	Record    string        // the acquisition's record, shared by its attempts
}

func (r RWReadAcquire) Request() Request {
	b := begin(rwReadAcquire, 4, 6)
	b.rwAcquireKeys(r.Lock, r.Owner)
	b.key("latchkey_rwlock_epoch:{name}", r.Lock.Epoch)
	b.ms("lease in ms", r.Lease)
	b.arg("owner id", r.Owner)
	b.arg("the owner's write field", writeField(r.Owner))
	b.flag(`"1" if the owner may re-enter`, r.Reentrant)
	b.arg("the epoch this call was first held back in", r.Epoch)
	b.ms("how long the epoch lives", r.EpochLife)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// RWWriteAcquire takes one write hold, or marks the call as a waiting
// writer for Life.
type RWWriteAcquire struct {
	Lock   keys.RWLock
	Owner  string
	Lease  time.Duration
	Entry  string        // the call's entry in the writers' marker
	Life   time.Duration // how long the entry lives; 0 for a single try
	Marked bool          // an earlier attempt of the call may have left its entry
	Record string        // the acquisition's record, shared by its attempts
}

func (r RWWriteAcquire) Request() Request {
	b := begin(rwWriteAcquire, 4, 6)
	b.rwAcquireKeys(r.Lock, r.Owner)
	b.key("latchkey_rwlock_token:{name}", r.Lock.Token)
	b.ms("lease in ms", r.Lease)
	b.arg("the owner's write field", writeField(r.Owner))
	b.arg("owner id", r.Owner)
	b.arg("the waiting call's entry in the marker", r.Entry)
	b.ms("how long an entry lives", r.Life)
	b.flag(`"1" if an earlier attempt of this call may have left its entry`, r.Marked)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// RWRelease releases one read hold of Owner, or one write hold.
type RWRelease struct {
	Lock   keys.RWLock
	Owner  string
	Write  bool
	Record string
}

func (r RWRelease) Request() Request {
	b := begin(rwRelease, 5, 3)
	b.key("lock hash name", r.Lock.Name)
	b.key("redisson_rwlock:{name}", r.Lock.Channel)
	b.key("{name}:<owner>:rwlock_timeout", r.Lock.ReadTimeouts(r.Owner))
	b.key("{name}", keys.Tag(r.Lock.Name))
	b.key("latchkey_rwlock_epoch:{name}", r.Lock.Epoch)
	if r.Write {
		b.arg("the field to release", writeField(r.Owner))
		b.arg(`"read" or "write"`, "write")
	} else {
		b.arg("the field to release", r.Owner)
		b.arg(`"read" or "write"`, "read")
	}
	b.input("PUBLISH or SPUBLISH", Pub)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// RWWriteWithdraw takes the entry of a writer that gave up out of the
// writers' marker, waking the readers it held back if it was the last.
type RWWriteWithdraw struct {
	Lock  keys.RWLock
	Entry string
}

func (r RWWriteWithdraw) Request() Request {
	b := begin(rwWriteWithdraw, 3, 2)
	b.key("latchkey_rwlock_writers:{name}", r.Lock.Writers)
	b.key("lock hash name", r.Lock.Name)
	b.key("redisson_rwlock:{name}", r.Lock.Channel)
	b.arg("the writer's entry in the marker", r.Entry)
	b.input("PUBLISH or SPUBLISH", Pub)
	return b.done()
}
