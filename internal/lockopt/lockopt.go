// Package lockopt holds the settings every primitive shares: the Hub its
// waiters sleep on and how long its writes wait for replicas (Base), and,
// for the locks, a fixed lease or the watchdog's (Common). Each primitive
// embeds one in its config and exports its own With... options, documented
// for that primitive.
package lockopt

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/shared"
	"github.com/redis/go-redis/v9"
)

// MinWatchdog is the shortest watchdog timeout accepted: renewals run every
// third of it, in whole milliseconds.
const MinWatchdog = 3 * time.Millisecond

// Base is the part of every primitive's config.
type Base struct {
	Hub  *notify.Hub  // nil: the client's shared Hub
	Sync scripts.Sync // how long writes wait for replicas
}

// HubFor returns the Hub to wait through: the one set, else client's shared
// one, looked up at each call so that latchkey.Close takes effect.
func (b *Base) HubFor(client redis.UniversalClient) *notify.Hub {
	if b.Hub != nil {
		return b.Hub
	}
	return shared.For(client).Hub()
}

// Publish returns the command scripts publish with on client: that of the
// Hub the primitive waits through, so that its waiters hear it.
func (b *Base) Publish(ctx context.Context, client redis.UniversalClient) (string, error) {
	return shared.Publish(ctx, client, b.Hub)
}

// Common is the shared part of a lock primitive's config.
type Common struct {
	Base
	Fixed    time.Duration // > 0: a fixed lease, and no watchdog
	Watchdog time.Duration // the lease the watchdog keeps, without Fixed
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
