package fairlock

import (
	"github.com/latchkey/latchkey/internal/lockopt"
	"time"

	"github.com/latchkey/latchkey/pubsub"
)

// An Option configures a Mutex.
type Option func(*config)

type config struct {
	lockopt.Common
	wait time.Duration
}

// DefaultWatchdogTimeout is the lease a watchdog-held lock is kept at
// (Redisson's lockWatchdogTimeout).
const DefaultWatchdogTimeout = 30 * time.Second

// DefaultWaitTimeout is how long a queued waiter may go without renewing
// its place before the others skip it.
const DefaultWaitTimeout = 5 * time.Second

// WithLease gives every hold a fixed lease d: the lock expires d after it
// was taken unless unlocked before, and nothing renews it (Redisson's
// lock(leaseTime)). New panics if d is not positive. The default is no fixed
// lease: the watchdog keeps the lock alive while it is held.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		c.SetLease("fairlock", d)
	}
}

// WithWatchdogTimeout sets the lease of a lock held without WithLease; the
// watchdog renews it every third of d, so a crashed holder's lock expires
// at most d after its last renewal. New panics if d is below 3ms.
// The default is 30s.
func WithWatchdogTimeout(d time.Duration) Option {
	return func(c *config) {
		c.SetWatchdog("fairlock", d)
	}
}

// WithWaitTimeout sets how long a queued waiter may be absent before the
// others skip it (Redisson's fairLockWaitTimeout, which this replaces). A
// live waiter keeps its place however long it waits: it renews its deadline
// to now + d at every attempt, and attempts at least every d/3 (see the
// package doc). A waiter that goes d without an attempt (it crashed, its
// process stalled, Redis was out of reach) is skipped; if it was alive after
// all, it queues again at the tail. All clients of one lock should use the
// same d, and their clocks must agree to well within d/3. New panics if d is
// below 3ms.
// The default is 5s.
func WithWaitTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 3*time.Millisecond {
			panic("fairlock: New: WithWaitTimeout: timeout must be at least 3ms")
		}
		c.wait = d
	}
}

// WithHub makes the Mutex wait through h instead of the Hub shared by its
// client (see pubsub.Shared). The default is the shared Hub.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.Hub = h }
}
