package mutex

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
}

// DefaultWatchdogTimeout is the lease a watchdog-held lock is kept at
// (Redisson's lockWatchdogTimeout).
const DefaultWatchdogTimeout = 30 * time.Second

// WithLease gives every hold a fixed lease d: the lock expires d after it
// was taken unless unlocked before, and nothing renews it (Redisson's
// lock(leaseTime)). New panics if d is below latchkey.MinLease (10ms), a
// lease too short to outlive the round trip that takes it and the drift
// allowance. Without WithLease, the watchdog keeps the lock alive while it
// is held. The default is no fixed lease.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		c.SetLease("mutex", d)
	}
}

// WithWatchdogTimeout sets the lease of a lock held without WithLease; the
// watchdog renews it every third of d, so a crashed holder's lock expires
// at most d after its last renewal. New panics if d is below
// latchkey.MinLease (10ms). The default is 30s.
func WithWatchdogTimeout(d time.Duration) Option {
	return func(c *config) {
		c.SetWatchdog("mutex", d)
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
// acknowledges counts as a failed renewal. A master without replicas is not
// waited for. d = 0 turns replica sync off; New panics if d is negative.
// The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) { c.Sync.Set("mutex", d) }
}
