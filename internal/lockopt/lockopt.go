// Package lockopt holds the settings every lock primitive shares: a fixed
// lease or the watchdog's, and the pub/sub Hub its waiters listen through.
// Each primitive embeds Common in its config and exports its own With...
// options, documented for that primitive.
package lockopt

import (
	"time"

	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

// MinWatchdog is the shortest watchdog timeout accepted: renewals run every
// third of it, in whole milliseconds.
const MinWatchdog = 3 * time.Millisecond

// Common is the shared part of a lock primitive's config.
type Common struct {
	Fixed    time.Duration // > 0: a fixed lease, and no watchdog
	Watchdog time.Duration // the lease the watchdog keeps, without Fixed
	Hub      *pubsub.Hub   // nil: the client's shared Hub
	Sync     scripts.Sync  // how long writes wait for replicas
}

// SetLease sets a fixed lease; it panics, naming pkg, if d is not positive.
func (c *Common) SetLease(pkg string, d time.Duration) {
	if d <= 0 {
		panic(pkg + ": New: WithLease: lease must be positive")
	}
	c.Fixed = d
}

// SetWatchdog sets the watchdog's lease; it panics, naming pkg, if d is
// below MinWatchdog.
func (c *Common) SetWatchdog(pkg string, d time.Duration) {
	if d < MinWatchdog {
		panic(pkg + ": New: WithWatchdogTimeout: timeout must be at least 3ms")
	}
	c.Watchdog = d
}

// TTL returns the TTL a hold's key gets: the fixed lease if any, else the
// watchdog's.
func (c *Common) TTL() time.Duration {
	if c.Fixed > 0 {
		return c.Fixed
	}
	return c.Watchdog
}

// HubFor returns the Hub to wait through: the one set, else client's shared
// one, looked up at each call so that latchkey.Close takes effect.
func (c *Common) HubFor(client redis.UniversalClient) *pubsub.Hub {
	if c.Hub != nil {
		return c.Hub
	}
	return pubsub.Shared(client)
}
