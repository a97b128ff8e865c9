package lockcore

import (
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// The mutex's scripts, one per operation (acquire and try share one): its
// operations on a Redisson RLock hash and on the waiter queue beside it
// (scripts/fragment/mutex.lua). A RedLock's queue node runs them too.
var (
	mutexAcquire = scripts.Get("mutex_acquire")
	mutexRelease = scripts.Get("mutex_release")
	mutexDequeue = scripts.Get("mutex_dequeue")
	mutexForce   = scripts.Get("mutex_force")
	mutexDelete  = scripts.Get("mutex_delete")
	// The fast paths of acquire and release, as scripts of their own that
	// take only the keys and arguments they need: Redis parses every one
	// of a call's, and the client writes them.
	mutexTakeFree     = scripts.Get("mutex_take_free")
	mutexReleaseAlone = scripts.Get("mutex_release_alone")
)

// The operations of the mutex's scripts.
const (
	OpAcquire = "acquire" // try, and join the waiter queue if not acquired
	OpTry     = "try"     // try once, leaving no trace
	OpRelease = "release"
	OpDequeue = "dequeue"
	OpForce   = "force"
	OpDelete  = "delete"
	// OpTakeFree tries once, as OpTry, but only takes a free lock: an owner
	// that may re-enter, or a call that may have queued, tries with OpTry.
	OpTakeFree = "take-free"
	// OpReleaseAlone releases as OpRelease when nobody queues, and answers
	// -2 (ReleaseQueued), doing nothing, when someone does.
	OpReleaseAlone = "release-alone"
)

// ReleaseQueued is OpReleaseAlone's answer when waiters queue: the release
// that hands the lock on is OpRelease.
const ReleaseQueued = -2

// MutexKeys returns the mutex scripts' KEYS for the lock called name.
func MutexKeys(name string) []string {
	l := keys.LockOf(name)
	return []string{l.Name, l.Token, l.Queue, l.Deadlines, l.Channel, l.Hubs, l.Grant}
}

// A MutexCall is one request of a mutex script (their headers say what
// each argument means).
type MutexCall struct {
	Op      string
	Owner   string // the owner id
	Entry   string // the waiter's queue entry, <hub id>/<letter key>
	Reentry string // see Waiter.Reentry
	Queued  bool   // an earlier attempt of the call may have queued it
	Lease   time.Duration
	Now     time.Time
	Pub     string        // PUBLISH or SPUBLISH
	Req     string        // the request record, or ""
	Sync    time.Duration // how long to wait for replicas (see rt.Write)
	// Yield lets a release (or a dequeue, a forced unlock) that Redisson's
	// waiters may have heard leave them the free lock before the head of
	// the queue takes it (scripts/fragment/mutex.lua). A RedLock's queue
	// node never yields: its queue's head listens on Redisson's channel.
	Yield bool
	// Tapped: one of the subscribers of Redisson's channel is the
	// releaser's own alarm (see hold.Tapped), no Redisson waiter.
	Tapped bool
	// HeardRelease: the acquiring waiter heard a release on Redisson's
	// channel since its latest attempt (see Waiter.HeardRelease).
	HeardRelease bool
}

// yield is the scripts' yield argument (see fragment/mutex.lua): "0" not
// to yield, "1" to yield, "2" to yield with one subscriber of Redisson's
// channel known to be no Redisson waiter.
func (c MutexCall) yield() string {
	switch {
	case !c.Yield:
		return "0"
	case c.Tapped:
		return "2"
	}
	return "1"
}

// Write returns c as a request on client, to the lock whose KEYS are ks,
// with the script of c.Op. It panics on an unknown Op.
func (c MutexCall) Write(client redis.UniversalClient, ks []string) rt.Call {
	w := rt.Write{Keys: ks, Once: c.Req, Sync: c.Sync}
	args := func(own ...any) []any { return handoff.ScriptArgs(client, c.Now, c.Pub, handoff.QueueTimeout, own...) }
	switch c.Op {
	case OpTakeFree:
		w.Keys = []string{ks[0], ks[1], ks[6]} // lock, token, grant
		w.Args = []any{c.Owner, scripts.Ms(c.Lease)}
		w.Once = "" // a fresh id's take has no record: a resend finds it holding
		return rt.Call{Script: mutexTakeFree, Write: w}
	case OpReleaseAlone:
		w.Keys = []string{ks[0], ks[6], ks[3], ks[4]} // lock, grant, deadlines, Redisson's channel
		w.Args = []any{c.Owner, scripts.Ms(c.Lease), c.Reentry, c.Pub}
		w.Sole = true
		return rt.Call{Script: mutexReleaseAlone, Write: w}
	case OpAcquire, OpTry:
		w.Args = args(c.Owner, c.Entry, scripts.Ms(c.Lease), c.Reentry, handoff.Flag(c.Queued), handoff.Flag(c.Op == OpTry),
			handoff.Flag(c.HeardRelease), scripts.Ms(handoff.Yield))
		return rt.Call{Script: mutexAcquire, Write: w}
	case OpRelease:
		w.Sole = true
		w.Args = args(c.Owner, scripts.Ms(c.Lease), c.Reentry, c.yield())
		return rt.Call{Script: mutexRelease, Write: w}
	case OpDequeue:
		w.Args = args(c.Entry, c.yield())
		return rt.Call{Script: mutexDequeue, Write: w}
	case OpForce:
		// and the channel that tells a watch who was forced out
		w.Keys = append(ks[:len(ks):len(ks)], keys.LockOf(ks[0]).Forced)
		w.Args = args(c.yield())
		return rt.Call{Script: mutexForce, Write: w}
	case OpDelete:
		w.Args = args()
		return rt.Call{Script: mutexDelete, Write: w}
	}
	panic("lockcore: unknown mutex operation " + c.Op)
}
