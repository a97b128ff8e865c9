// Package lease is the watchdog: a renewal scheduler, one per go-redis
// client (its runtime, package internal/rt, keeps it), that keeps every lock held
// without an explicit lease alive, and every permit kept alive
// (permitsemaphore's Permit.KeepAlive).
//
// Each hold is renewed every lease/3. Holds due together are renewed in
// batches of at most MaxBatch per script call, grouped by renewal script,
// lease and cluster hash slot. A renewal that finds the hold gone declares it
// lost at once; a transient error is retried until the hold's local validity
// (the last successful renewal plus the lease, less a drift allowance) runs
// out, and then a timer declares the hold lost, whatever renewal is still on
// its way. A lost hold is never renewed or re-acquired again.
package lease

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
)

// MaxBatch is the most holds one renewal script call carries (Redisson's
// lockWatchdogBatchSize).
const MaxBatch = 100

// A Kind is a renewal script, by name (the runtime's send path runs it),
// and the shape of one hold's KEYS and ARGV in it: ARGV[1] is the lease in ms, followed by ArgsPerItem values per hold,
// and the script returns one 1 (renewed), 0 (lost) or -1 (the name holds
// another type now: lost) per hold.
type Kind struct {
	Script      string // the script of package scripts
	KeysPerItem int
	ArgsPerItem int
	// Clock puts the client's clock when the renewal is sent, in ms since
	// the epoch, in ARGV[2], before the holds' values: a hold whose lease
	// is a wall-clock time (a permit's) rather than a TTL is renewed to
	// that plus the lease.
	Clock bool
}

// HashLock renews Redisson hash locks: KEYS[i] = the lock, ARGV[i+1] = the
// owner field (RLock, fair lock, write lock).
var HashLock = &Kind{Script: "lock_renew", KeysPerItem: 1, ArgsPerItem: 1}

// A Hold is one lock hold to keep alive. Keys[0] decides its hash slot.
type Hold struct {
	Kind *Kind
	Keys []string
	// Args gives the hold's ARGV items in a renewal, for Owner: asked at
	// each renewal rather than kept, since most holds end before their
	// first.
	Owner string
	Args  func(owner string) []any
	Lease time.Duration
	// Sync is the longest a renewal waits for the replicas of the hold's
	// master (see rt.Write); 0 for none. A renewal no replica
	// acknowledged counts as failed.
	Sync time.Duration
	// Lost is called from a goroutine of the scheduler (or of Close),
	// never from Add's caller, when the hold is found gone or cannot be
	// renewed before its validity ends; once, but for a hold found gone on
	// the server, which is told again, with ErrExpired, when its validity
	// ends, unless Remove came first: its holder may hold back a loss
	// found on the server while its own release is on its way (that loss
	// may be the release), but not past the validity. It must not block.
	Lost func(error)
	// Failed, if set, is told of a renewal that failed with err, which is
	// retried (latchkey.Hooks.RenewalFailed). It must not block.
	Failed func(err error)

	next     time.Time   // when the next renewal is due
	valid    time.Time   // local validity: last confirmed renewal + Lease
	expiry   *time.Timer // declares the hold lost at deadline()
	failures int         // renewals failed in a row
	lastErr  error       // of the latest failed renewal
	recheck  bool        // renewed early by Recheck, not yet answered
	found    bool        // found gone on the server: expiry still tells
}

// Drift is how much sooner than its lease a hold is declared lost: the
// lease's hundredth plus 2ms (redlock-rb's allowance), for the clocks'
// rates, Redis's millisecond expiry and the time a timer takes to fire.
func Drift(lease time.Duration) time.Duration { return lease/100 + 2*time.Millisecond }

// ValidUntil is how long a hold whose lease a request sent at sent set to
// d may be relied on: the server set the TTL after the send, less Drift.
func ValidUntil(sent time.Time, d time.Duration) time.Time { return sent.Add(d - Drift(d)) }

// deadline is when the hold is declared lost unless renewed before: its
// key expires no sooner than valid, as the server set its TTL after the
// renewal was sent.
func (h *Hold) deadline() time.Time { return h.valid.Add(-Drift(h.Lease)) }

// window is how early a renewal may run to share a script call with
// others: a tenth of the lease, which still leaves more than half of it. A
// renewal being retried after an error waits for its own time.
func (h *Hold) window() time.Duration {
	if h.failures > 0 {
		return 0
	}
	return h.Lease / 10
}

// retryDelay is how soon a renewal that failed with an error is retried:
// 20ms, doubling with each failure up to a tenth of the lease or 2s; up
// to 100ms for a Recheck's, since a server that just came back may refuse
// for a moment (a cluster node answers CLUSTERDOWN until its peers
// agree), and the holder should learn soon after it stops.
func (h *Hold) retryDelay() time.Duration {
	d := 20 * time.Millisecond << min(h.failures-1, 10)
	if h.recheck {
		d = min(d, 100*time.Millisecond)
	}
	return min(d, max(h.Lease/10, time.Millisecond), 2*time.Second)
}

// lostErr is what Lost receives when the hold was not found.
var lostErr = lockerr.ErrLost

// ErrExpired is in the cause of a hold declared lost because its validity
// ran out unrenewed. Unlike a hold found gone, which may be its holder's
// own release on its way, an expired hold is over whatever a request on
// its way finds: the server may have let it go already.
var ErrExpired = errors.New("not renewed within its lease")

// renewTimeout bounds one renewal call: never longer than a third of the
// lease, so a stalled call cannot eat the whole validity.
func renewTimeout(lease time.Duration) time.Duration {
	return max(lease/3, 50*time.Millisecond)
}

func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
