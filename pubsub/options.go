package pubsub

import (
	"time"

	"github.com/latchkey/latchkey/internal/notify"
)

// An Option configures a Hub.
type Option struct{ o notify.Option }

// WithSharded forces sharded pub/sub (SSUBSCRIBE, and SPUBLISH by the
// primitives that wait through the Hub) on or off. Java and Go clients hear
// each other only if they agree: Redisson uses it on a Redis Cluster that
// supports it. The default is on for a Redis Cluster of Redis 7 or later,
// off otherwise.
func WithSharded(on bool) Option { return Option{notify.WithSharded(on)} }

// WithIdleTimeout sets how long a subscriber connection with no channels
// left stays open before the Hub closes it; the Hub reopens it on demand.
// The default is 30s.
func WithIdleTimeout(d time.Duration) Option { return Option{notify.WithIdleTimeout(d)} }

// WithLinger sets how long a channel stays subscribed after its last waiter
// left. A busy lock's next waiter then finds its channel live and waits
// without the round trips of SUBSCRIBE and UNSUBSCRIBE. Zero unsubscribes at
// once. The default is 1s.
func WithLinger(d time.Duration) Option { return Option{notify.WithLinger(d)} }
