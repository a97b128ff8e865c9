package election

import (
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
)

// An Option configures an Election.
type Option func(*config)

type config struct {
	lockopt.Base
	lock []mutex.Option // passed on to the election's mutex
}

// DefaultLeaseTimeout is how long a leader that stopped (crashed, cut off,
// paused) keeps the leadership: the lease its client's watchdog renews
// every third of (etcd's session TTL).
const DefaultLeaseTimeout = mutex.DefaultWatchdogTimeout

// WithLeaseTimeout sets how long a leader that stopped keeps the
// leadership: its lock's watchdog lease, renewed every third of d, so a
// failover takes at most d after the leader's last renewal. New panics if
// d is below latchkey.MinLease. The default is DefaultLeaseTimeout.
func WithLeaseTimeout(d time.Duration) Option {
	if err := lockopt.CheckLease(d); err != nil {
		panic("election: New: WithLeaseTimeout: " + err.Error())
	}
	return func(c *config) { c.lock = append(c.lock, mutex.WithWatchdogTimeout(d)) }
}

// WithHub makes the Election wait and observe through h instead of the Hub
// shared by its client (see pubsub.Shared); a nil h keeps the default. The
// default is the client's shared Hub.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) {
		c.Hub = notify.Unwrap(h)
		c.lock = append(c.lock, mutex.WithHub(h))
	}
}

// WithReplicaSync makes the leadership's acquisition, renewals and release
// wait, for at most d, until the replicas of the lock's master acknowledge
// them (see mutex.WithReplicaSync). The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) {
		c.Sync.Set("election", d)
		c.lock = append(c.lock, mutex.WithReplicaSync(d))
	}
}
