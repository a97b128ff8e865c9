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
// allowance (d/100 + 2ms), and nothing renews it. New panics if d is not
// positive. Without it, the watchdog keeps the lock alive while it is held.
// The default is no fixed lease.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		c.SetLease("redlock", d)
	}
}

// WithWatchdogTimeout sets the lease of a lock held without WithLease. The
// watchdog renews it on every node each third of d, and the hold stays
// valid as long as a quorum of nodes confirms each renewal. New panics if d
// is below 3ms. The default is 30s.
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

// WithHub makes waiters also listen, through h, for the unlock messages of
// the node whose client h uses (typically pubsub.Shared of one of the
// clients), so that an unlock wakes them at once instead of after the
// random retry delay. A waiter whose subscription fails returns that error,
// so pick a node you expect to be up. Without a Hub, waiters only retry
// after the random delay. The default is no Hub.
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
