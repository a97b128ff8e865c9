package semaphore

import (
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/pubsub"
)

// An Option configures a Semaphore.
type Option func(*config)

type config struct {
	lockopt.Base
}

// WithHub makes the Semaphore wait through h instead of the Hub shared by its
// client (see pubsub.Shared); a nil h keeps the default. The default is the
// client's shared Hub.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.Hub = notify.Unwrap(h) }
}

// WithReplicaSync makes every change to the semaphore wait, for at most d,
// until the replicas of its master acknowledge it (Redis WAIT on the same
// connection, Redisson's synced eval), so that a failover cannot lose
// permits that Acquire reported taken or Release given back. An Acquire
// that no replica acknowledges gives the permits back and fails with an
// error matching latchkey.ErrNotReplicated. A Release, or a change of the
// permits, that none acknowledges is applied on the master all the same and
// returns such an error: a failover before the replica catches up would
// lose it. A master without replicas is not waited for. d = 0 turns replica
// sync off; New panics if d is negative. The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) { c.Sync.Set("semaphore", d) }
}
