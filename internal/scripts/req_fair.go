package scripts

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
)

// The requests of the fair lock's scripts (fragment/fair_decide.lua has
// the rules they share): Redisson's RFairLock keys, and latchkey's
// heartbeats, grant and fencing counter beside them.

var (
	fairAcquire = Get("fair_acquire")
	fairRelease = Get("fair_release")
	fairDequeue = Get("fair_dequeue")
	fairForce   = Get("fair_force")
	fairDelete  = Get("fair_delete")
)

// fairKeys writes the KEYS of every fair lock script (fragment/fair_state.lua).
func (b *build) fairKeys(l keys.Lock) {
	b.key("lock hash", l.Name)
	b.key("Redisson's queue", l.FairQueue)
	b.key("Redisson's deadlines", l.FairDeadlines)
	b.key("heartbeats", l.Heartbeats)
	b.key("Redisson's channel prefix", l.Channel)
	b.key("grant", l.Grant)
	b.key("Hub channel prefix", l.Hubs)
	b.key("fencing counter", l.FairToken)
}

// fairInputs writes the ARGV that every fair lock script but fair_delete
// takes first (fragment/fair_state.lua): the shared inputs, the owner,
// the lease and Redisson's wait timeout.
func (b *build) fairInputs(liveness time.Duration, owner, ownerLabel string, lease, wait time.Duration) {
	b.queued("liveness timeout", liveness)
	b.arg(ownerLabel, owner)
	b.ms("lease", lease)
	b.ms("Redisson's wait timeout", wait)
}

// FairAcquire takes the fair lock, or queues up for it, or with Try tries
// once, leaving no trace.
type FairAcquire struct {
	Lock     keys.Lock
	Owner    string
	Lease    time.Duration
	Wait     time.Duration // Redisson's fairLockWaitTimeout
	Liveness time.Duration // how long a silent latchkey waiter keeps its place
	Reentry  string        // Fresh, Reentrant or Holding
	Hub      string        // the caller's Hub id, "" for a polling client
	Key      string        // the caller's letter key
	Try      bool
	Record   string // a re-entry's record, "" for a fresh id
}

func (r FairAcquire) Request() Request {
	b := begin(fairAcquire, 8, 12)
	b.fairKeys(r.Lock)
	b.fairInputs(r.Liveness, r.Owner, "owner id", r.Lease, r.Wait)
	b.arg(`"1": the owner may re-enter`, r.Reentry)
	b.arg("the caller's Hub id", r.Hub)
	b.arg("the caller's letter key", r.Key)
	b.flag(`"1" to try once`, r.Try)
	b.recorded(r.Record, false)
	b.synced()
	return b.done()
}

// FairRelease releases one hold of Owner; the last one hands the lock on.
type FairRelease struct {
	Lock     keys.Lock
	Owner    string
	Lease    time.Duration // restored when holds remain
	Wait     time.Duration
	Liveness time.Duration
	Record   string
}

func (r FairRelease) Request() Request {
	b := begin(fairRelease, 8, 8)
	b.fairKeys(r.Lock)
	b.fairInputs(r.Liveness, r.Owner, "owner id", r.Lease, r.Wait)
	b.recorded(r.Record, true)
	b.synced()
	return b.done()
}

// FairDequeue takes a waiter that gave up (or that the CLI evicts) out of
// the queue, waking the next if it was first, and gives back a grant that
// reached it too late.
type FairDequeue struct {
	Lock     keys.Lock
	Owner    string
	Lease    time.Duration
	Wait     time.Duration
	Liveness time.Duration
	Hub      string // the waiter's Hub id, "" if unknown: the script finds its heartbeat
	Key      string // the waiter's letter key, with Hub
}

func (r FairDequeue) Request() Request {
	b := begin(fairDequeue, 8, 10)
	b.fairKeys(r.Lock)
	b.fairInputs(r.Liveness, r.Owner, "owner id", r.Lease, r.Wait)
	b.arg("the caller's Hub id", r.Hub)
	b.arg("the caller's letter key", r.Key)
	b.synced()
	return b.done()
}

// FairForce deletes the fair lock whoever holds it (ForceUnlock), and
// hands it on.
type FairForce struct {
	Lock     keys.Lock
	Lease    time.Duration
	Wait     time.Duration
	Liveness time.Duration
}

func (r FairForce) Request() Request {
	b := begin(fairForce, 9, 8)
	b.fairKeys(r.Lock)
	b.key("latchkey_lock__forced", r.Lock.Forced)
	b.fairInputs(r.Liveness, "", `"" (no owner)`, r.Lease, r.Wait)
	return b.done()
}

// FairDelete deletes every key of a fair lock nobody holds.
type FairDelete struct {
	Lock     keys.Lock
	Liveness time.Duration
}

func (r FairDelete) Request() Request {
	b := begin(fairDelete, 8, 5)
	b.fairKeys(r.Lock)
	b.queued("liveness timeout", r.Liveness)
	return b.done()
}
