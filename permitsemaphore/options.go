package permitsemaphore

import "github.com/latchkey/latchkey/pubsub"

// An Option configures a Semaphore.
type Option func(*config)

type config struct {
	hub *pubsub.Hub
}

// WithHub makes the Semaphore wait through h instead of the Hub shared by
// its client; a nil h keeps the default. The default is the client's
// shared Hub (see pubsub.Shared).
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.hub = h }
}
