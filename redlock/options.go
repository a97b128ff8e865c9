package redlock

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
	nodeTimeout time.Duration // 0: a twentieth of the lease
	retryDelay  time.Duration
}

const (
	// DefaultWatchdogTimeout is the lease a watchdog-held lock is kept at
	// on each node (Redisson's lockWatchdogTimeout).
	DefaultWatchdogTimeout = 30 * time.Second

	// DefaultRetryDelay is the longest random pause between two attempts
	// (redlock-rb's retry delay).
	DefaultRetryDelay = 200 * time.Millisecond
)

// WithLease gives every hold a fixed lease d on each node: the hold is
// valid for d minus the time the acquisition took and the clock drift
// allowance (d/100 + 2ms), and nothing renews it. New panics if d is below
// latchkey.MinLease (10ms), a lease too short to outlive the round trip
// that takes it and the drift allowance. A short lease also shortens the
// default node timeout (d/20), which may then be below a round trip, so
// that every attempt fails with a *QuorumError: with a lease under about
// 100ms, set WithNodeTimeout too. Without WithLease, the watchdog keeps the
// lock alive while it is held. The default is no fixed lease.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		c.SetLease("redlock", d)
	}
}

// WithWatchdogTimeout sets the lease of a lock held without WithLease. The
// watchdog renews it on every node each third of d, and the hold stays
// valid as long as a quorum of nodes confirms each renewal. New panics if d
// is below latchkey.MinLease (10ms). The default is 30s.
func WithWatchdogTimeout(d time.Duration) Option {
	return func(c *config) {
		c.SetWatchdog("redlock", d)
	}
}

// WithNodeTimeout sets how long an attempt, a renewal or an unlock waits
// for each node's reply; a node that does not answer in time counts as
// failed, so a stalled node cannot eat the lease. An attempt waits for
// every node's reply or the timeout, so d should be far below the lease
// (the Redlock description suggests 5-50ms for a 10s lease): an attempt
// that takes longer than the lease minus the drift allowance wins nothing.
// New panics if d is not positive or not below the lease. The default is a
// twentieth of the lease (1.5s with the default watchdog timeout).
func WithNodeTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("redlock: New: WithNodeTimeout: timeout must be positive")
		}
		c.nodeTimeout = d
	}
}

// WithRetryDelay sets the longest pause between two attempts of a waiting
// Lock or TryLock; each pause is drawn at random up to d, so that clients
// competing for the lock drift apart instead of splitting the nodes between
// them again. New panics if d is not positive. The default is 200ms.
func WithRetryDelay(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("redlock: New: WithRetryDelay: delay must be positive")
		}
		c.retryDelay = d
	}
}

// WithHub makes the node whose client h uses (h should be pubsub.Shared
// of one of the clients) the queue node: waiters of every client queue there, as a mutex's do on its
// server, and an unlock grants that node's lock to the first waiter in
// line and tells it alone through its Hub, so it asks the other nodes at
// once, while the other waiters sleep. An attempt asks the queue node
// first and the others only once it has the queue node's lock (one more
// round trip for an uncontended Lock); should the queue node fail, it asks
// every node at once, as without a Hub. Handles of one lock should all use
// the same queue node: a release by a handle without it, or by a Redisson
// client, wakes the head of the queue only through Redisson's unlock
// message. A waiter whose subscription fails returns that error, so pick a
// node you expect to be up. Without a Hub, waiters only retry after the
// random delay. The default is no Hub: a RedLock then depends on no single
// node for its wake-ups.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.Hub = notify.Unwrap(h) }
}

// WithReplicaSync makes every acquisition, release and renewal on a node
// wait, for at most d, until that node's replicas acknowledge it (Redis
// WAIT on the same connection). A node whose grant no replica acknowledged
// does not count towards the quorum, and its grant is undone; a renewal
// likewise. A node without replicas is not waited for. The wait counts
// within the node timeout (see WithNodeTimeout). d = 0 turns replica sync
// off; New panics if d is negative. The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) { c.Sync.Set("redlock", d) }
}
