package main

import (
	"errors"

	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// State is what inspect reports about one name; -json prints it as is.
type State struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// TTLms is the main key's remaining time to live in ms: -1 if it has
	// no TTL, 0 if it does not exist.
	TTLms   int64    `json:"ttl_ms"`
	Mode    string   `json:"mode,omitempty"` // rwlock: read or write
	Holders []Holder `json:"holders"`
	// Token is the fencing counter, which outlives the holds: the token of
	// the latest acquisition by latchkey. A mutex's is
	// redisson_lock_token:{name}, a fair lock's latchkey_lock_token:{name};
	// a read-write lock's, latchkey_rwlock_token:{name}, is shown only
	// while a latchkey writer holds it, whose token it then is (read holds
	// and Redisson's have none).
	Token *int64 `json:"token"`
	// Permits is a semaphore's permits available: the count in Redis. A
	// permit semaphore's expired permits are not among them until a call
	// reclaims them: PermitsExpired counts those, PermitsAcquired the
	// live leases, PermitsTotal the three together. A plain semaphore
	// keeps no record of who holds its permits: those three are null.
	Permits         *int64 `json:"permits"`
	PermitsAcquired *int64 `json:"permits_acquired"`
	PermitsExpired  *int64 `json:"permits_expired"`
	PermitsTotal    *int64 `json:"permits_total"`
	// Leases are a permit semaphore's permits held (their lease running),
	// Expired those whose lease ended, not reclaimed yet.
	Leases  []Permit `json:"permit_ids"`
	Expired []Permit `json:"expired_permit_ids"`
	Count   *int64   `json:"count"` // countdownlatch: the count
	Queue   []Waiter `json:"queue"`
	// Channel is the channel on which the waiters that have no queue
	// entry wait (Redisson's: a read-write lock's readers, a latch's
	// waiters, Redisson's lock and semaphore waiters), and Subscribers
	// how many connections listen on it: each client process counts
	// once, however many of its waiters wait (a latchkey Hub, a Redisson
	// client), including queued waiters that listen there too, a
	// latchkey client for a second after its last waiter left, and a
	// latchkey watch. Null where the kind has no such channel or the
	// server would not count.
	Channel     string `json:"channel,omitempty"`
	Subscribers *int64 `json:"subscribers"`
	// Granted is the owner a release granted a mutex or fair lock to, not
	// taken yet; Grants are a semaphore's queue entries granted permits
	// and not taken yet, each until the end of its grace (DeadlineMs).
	// A permit semaphore's grant is a permit among Leases whose lease is
	// the grace.
	Granted string   `json:"granted,omitempty"`
	Grants  []Waiter `json:"grants"`
	// Leader is the election leader's record (package election), for a
	// mutex whose holder campaigned: latchkey_election:{name}.
	Leader *Leader `json:"leader,omitempty"`
	Note   string  `json:"note,omitempty"`
	// bare is set on a plain integer that nothing beside it ties to a
	// synchronizer: ls leaves it out.
	bare bool
}

// A Leader is the record of the leader of an election on a mutex.
type Leader struct {
	Owner string `json:"owner"`
	Value string `json:"value"`
	Term  int64  `json:"term"` // the fencing token of its hold
}

// A Holder is one owner holding a lock.
type Holder struct {
	Owner  string `json:"owner"`
	Count  int64  `json:"count"`          // holds (reentrancy)
	Mode   string `json:"mode,omitempty"` // rwlock: read or write
	Client string `json:"client"`         // latchkey or redisson (by the owner id's shape)
	// TTLms is the hold's time to live: the lock's, or a reader's longest
	// read hold's.
	TTLms *int64 `json:"ttl_ms,omitempty"`
	// Token is the holder's fencing token: a latchkey holder's of a
	// mutex, fair lock or write lock, which its acquisition drew from the
	// counter (State.Token). A Redisson holder has none here: an RLock
	// draws none, so the counter is an earlier holder's.
	Token *int64 `json:"token,omitempty"`
	// RenewedMs is how long ago the hold was last renewed (or taken), as
	// its TTL tells against the watchdog lease (-lease): null when it
	// cannot tell (a TTL over the lease, or none). RunningDown is set when
	// that is longer than a watchdog renewing every third of the lease
	// allows: its holder stopped renewing it, or took it with a fixed
	// lease.
	RenewedMs   *int64 `json:"renewed_ms"`
	RunningDown bool   `json:"running_down"`
	// Process is the process behind a latchkey owner, as it recorded
	// itself; omitted for Redisson's owners and for a process with no
	// record (see Process).
	Process *Process `json:"process,omitempty"`
}

// A Waiter is one entry of a waiter queue, first in line first.
type Waiter struct {
	Owner   string `json:"owner"`
	Client  string `json:"client"`
	Mode    string `json:"mode,omitempty"`    // rwlock: write
	Permits int64  `json:"permits,omitempty"` // semaphores: permits asked for
	// DeadlineMs is when the entry lapses unless its waiter renews it
	// (epoch ms): a latchkey waiter renews it at each attempt, so it is
	// its heartbeat; a Redisson fair-lock waiter's is its wait timeout.
	// InMs is how long until then (negative: lapsed, left for the next
	// call to purge).
	DeadlineMs int64 `json:"deadline_ms"`
	InMs       int64 `json:"in_ms"`
	// Alive is whether the waiter seems to live: its entry has not lapsed
	// and, where it has a channel of its own (a latchkey waiter's Hub's, a
	// Redisson fair-lock waiter's), a connection listens on it, the
	// signals the releases use to skip dead waiters. LapsedMs is how long
	// ago the entry lapsed (0 if it has not); Listening whether its
	// channel has a subscriber (null: no channel of its own, or not
	// counted).
	Alive     bool     `json:"alive"`
	LapsedMs  int64    `json:"lapsed_ms"`
	Listening *bool    `json:"listening"`
	Process   *Process `json:"process,omitempty"` // as Holder.Process
	// channel is the waiter's own channel, "" if none.
	channel string
}

// A Permit is one acquired permit of a permit semaphore.
type Permit struct {
	ID        string `json:"id"`         // 32 hex characters, as Redisson shows it
	ExpiresMs int64  `json:"expires_ms"` // epoch ms, -1 if permanent
	TTLms     int64  `json:"ttl_ms"`     // -1 if permanent, 0 if expired
}

// permanent is Redisson's lease end of a permit without a lease.
const permanent = 922337203685477

// client tells whose owner id this is.
func client(id string) string {
	if owner.Latchkey(id) {
		return "latchkey"
	}
	return "redisson"
}

// ttl turns a PTTL reply into State.TTLms.
func ttl(cmd *redis.DurationCmd) int64 {
	switch d := cmd.Val(); {
	case d == -1:
		return -1
	case d < 0:
		return 0
	default:
		return d.Milliseconds()
	}
}

// failed returns the first error of cmds other than redis.Nil.
func failed(c *conn, key string, cmds ...redis.Cmder) error {
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return c.keyErr(key, err)
		}
	}
	return nil
}
