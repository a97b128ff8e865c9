package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the plain lock scripts: a RedLock node's Redisson RLock
// hash, and what a read-write lock and a latch share to delete their keys.

var (
	lockAcquire      = Get("lock_acquire")
	lockRelease      = Get("lock_release")
	lockDelete       = Get("lock_delete")
	lockForceRelease = Get("lock_force_release")
)

// LockAcquire takes a RedLock node's lock, drawing a fencing token.
type LockAcquire struct {
	Lock      keys.Lock // its Name and Token
	Lease     time.Duration
	Owner     string
	Reentrant bool // false: the id is fresh, and a resend finds it holding
}

func (r LockAcquire) Request() Request {
	b := begin(lockAcquire, 2, 3)
	b.key("lock hash name", r.Lock.Name)
	b.key("redisson_lock_token:{name}", r.Lock.Token)
	b.ms("lease in ms", r.Lease)
	b.arg("owner id", r.Owner)
	b.flag(`"1": the owner may re-enter`, r.Reentrant)
	b.synced()
	return b.done()
}

// LockRelease releases one hold of a RedLock node's lock, publishing
// Redisson's unlock message when it frees it.
type LockRelease struct {
	Lock   keys.Lock // its Name and Channel
	Owner  string
	Lease  time.Duration // restored when holds remain
	Record string
}

func (r LockRelease) Request() Request {
	b := begin(lockRelease, 2, 3)
	b.key("lock hash name", r.Lock.Name)
	b.key("redisson_lock__channel:{name}", r.Lock.Channel)
	b.arg("owner id", r.Owner)
	b.ms("lease in ms", r.Lease)
	b.input("PUBLISH or SPUBLISH", Pub)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// LockDelete deletes the keys kept beside a lock that nobody holds, and
// wakes its waiters with Message.
type LockDelete struct {
	Name, Channel string // the lock's key, and its channel
	Beside        []string
	Message       string
}

func (r LockDelete) Request() Request {
	b := begin(lockDelete, 2+len(r.Beside), 2)
	b.key("the lock's key", r.Name)
	b.key("the lock's channel", r.Channel)
	for _, k := range r.Beside {
		b.key("the keys kept beside it", k)
	}
	b.input("PUBLISH or SPUBLISH", Pub)
	b.arg("the message that wakes waiters", r.Message)
	return b.done()
}

// LockForceRelease deletes a lock whoever holds it, or a latch, and wakes
// its waiters with Message. Forced, if not "", is where a lock publishes
// the owners it forced out first.
type LockForceRelease struct {
	Name, Channel string // the key, and its channel
	Forced        string
	Message       string
}

func (r LockForceRelease) Request() Request {
	b := begin(lockForceRelease, 3, 2)
	b.key("lock key", r.Name)
	b.key("the lock's channel", r.Channel)
	if r.Forced != "" {
		b.key("optional, a lock's only: latchkey_rwlock__forced:{name}", r.Forced)
	}
	b.input("PUBLISH or SPUBLISH", Pub)
	b.arg("the message that wakes waiters", r.Message)
	return b.done()
}
