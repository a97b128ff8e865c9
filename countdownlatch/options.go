package countdownlatch

import (
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/pubsub"
)

// An Option configures a Latch.
type Option func(*config)

type config struct {
	lockopt.Base
}

// WithHub makes the Latch wait through h instead of the Hub shared by its
// client (see pubsub.Shared); a nil h keeps the default. The default is the
// client's shared Hub.
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.Hub = notify.Unwrap(h) }
}

// WithReplicaSync makes TrySetCount and CountDown wait, for at most d,
// until the replicas of the latch's master acknowledge the change (Redis
// WAIT on the same connection), so that a failover cannot undo it. A
// change that no replica acknowledges is applied on the master all the
// same, and the call returns an error matching latchkey.ErrNotReplicated:
// a failover before the replica catches up would bring back the count
// (waiters would then wait for a count-down that already happened). A
// master without replicas is not waited for (Redisson does not sync its
// latch at all). d = 0 turns replica sync off; New panics if d is negative.
// The default is 1s.
func WithReplicaSync(d time.Duration) Option {
	return func(c *config) { c.Sync.Set("countdownlatch", d) }
}
