package fairlock

import (
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/pubsub"
)

// An Option configures a Mutex.
type Option func(*config)

type config struct {
	lockopt.Common
	wait     time.Duration // Redisson's fairLockWaitTimeout
	liveness time.Duration // how long a silent latchkey waiter keeps its place
}

// DefaultWatchdogTimeout is the lease a watchdog-held lock is kept at
// (Redisson's lockWatchdogTimeout).
const DefaultWatchdogTimeout = 30 * time.Second

// DefaultWaitTimeout is Redisson's default fairLockWaitTimeout.
const DefaultWaitTimeout = 5 * time.Minute

// DefaultLivenessTimeout is how long a queued latchkey waiter may go
// without an attempt before the others skip it.
const DefaultLivenessTimeout = 5 * time.Second

// WithLease gives every hold a fixed lease d: the lock expires d after it
// was taken unless unlocked before, and nothing renews it (Redisson's
// lock(leaseTime)). New panics if d is below latchkey.MinLease (10ms), a
// lease too short to outlive the round trip that takes it and the drift
// allowance. Without WithLease, the watchdog keeps the lock alive while it
// is held. The default is no fixed lease.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		c.SetLease("fairlock", d)
	}
}

// WithWatchdogTimeout sets the lease of a lock held without WithLease; the
// watchdog renews it every third of d, so a crashed holder's lock expires
// at most d after its last renewal. New panics if d is below
// latchkey.MinLease (10ms). The default is 30s.
func WithWatchdogTimeout(d time.Duration) Option {
	return func(c *config) {
		c.SetWatchdog("fairlock", d)
	}
}

// WithWaitTimeout sets Redisson's fair-lock wait timeout, the step of the
// queue's deadlines (see the package doc): a waiter's deadline is the one
// of the waiter before it plus d, and each acquisition brings every
// deadline d closer. It must equal the fairLockWaitTimeout of every
// Redisson client of the lock, and be the same for every latchkey client of
// it; otherwise waiters are skipped while still alive, or a crashed Redisson
// waiter holds up the queue for longer. A waiter of either kind whose turn
// comes when its deadline has passed, because the holders since it queued
// held the lock for more than d each on average, loses its place and
// queues again at the tail, as in Redisson. New panics if d is below 1ms.
// The default is 5m, Redisson's default.
func WithWaitTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond {
			panic("fairlock: New: WithWaitTimeout: timeout must be at least 1ms")
		}
		c.wait = d
	}
}

// WithLivenessTimeout sets how long a queued latchkey waiter may go without
// an attempt before the others skip it. A live waiter attempts at least
// every d/3 (see the package doc), so it keeps its place however long it
// waits; one that goes d without an attempt (it crashed, its process
// stalled, Redis was out of reach) is skipped, and if it was alive after
// all it queues again at the tail. This is latchkey's own: it applies to
// latchkey waiters only, and Redisson waiters are skipped by their
// deadlines alone (WithWaitTimeout). Clients' clocks must agree to well
// within d/3. New panics if d is below 3ms.
// The default is 5s.
func WithLivenessTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 3*time.Millisecond {
			panic("fairlock: New: WithLivenessTimeout: timeout must be at least 3ms")
		}
		c.liveness = d
	}
}

// WithHub makes the Mutex wait through h instead of the Hub shared by its
// client (see pubsub.Shared); a nil h keeps the default. The default is the
// client's shared Hub.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.Hub = notify.Unwrap(h) }
}

// WithReplicaSync makes every acquisition, release and renewal of the lock
// wait, for at most d, until the replicas of the lock's master acknowledge
// it (Redis WAIT on the same connection, Redisson's synced eval), so that a
// failover cannot lose a hold that Lock reported. An acquisition that no
// replica acknowledges is undone and fails with an error matching
// latchkey.ErrNotReplicated; an Unlock that none acknowledges is applied on
// the master all the same, and returns such an error; a renewal that none
// acknowledges counts as a failed renewal. Queue upkeep (joining, leaving)
// is not waited for. A master without replicas is not waited for. d = 0
// turns replica sync off; New panics if d is negative. The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) { c.Sync.Set("fairlock", d) }
}
