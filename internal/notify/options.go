package notify

import "time"

// An Option configures a Hub.
type Option func(*config)

type config struct {
	sharded   *bool
	idle      time.Duration
	linger    time.Duration
	healthInt time.Duration // how long a quiet connection goes before a PING
}

func defaults() config {
	return config{idle: 30 * time.Second, linger: time.Second, healthInt: 3 * time.Second}
}

// WithSharded forces sharded pub/sub (SSUBSCRIBE/SPUBLISH) on or off. The
// default is to use it on a Redis Cluster that supports it (Redis 7 or
// later), as Redisson does, so that Java and Go clients hear each other.
func WithSharded(on bool) Option {
	return func(c *config) { c.sharded = &on }
}

// WithIdleTimeout sets how long a subscriber connection with no channels left
// stays open before the Hub closes it; the Hub reopens it on demand.
// The default is 30s.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.idle = d
		}
	}
}

// WithLinger sets how long a channel stays subscribed after its last waiter
// left. A busy lock's next waiter then finds its channel live and waits
// without the round trips of SUBSCRIBE and UNSUBSCRIBE. Zero unsubscribes at
// once. The default is 1s.
func WithLinger(d time.Duration) Option {
	return func(c *config) { c.linger = max(d, 0) }
}
