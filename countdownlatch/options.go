package countdownlatch

import "github.com/latchkey/latchkey/pubsub"

// An Option configures a Latch.
type Option func(*config)

type config struct {
	hub *pubsub.Hub
}

// WithHub makes the Latch wait through h instead of the Hub shared by its
// client. A nil h selects the shared Hub. The default is the Hub shared by
// the client (see pubsub.Shared).
func WithHub(h *pubsub.Hub) Option {
	return func(c *config) { c.hub = h }
}
