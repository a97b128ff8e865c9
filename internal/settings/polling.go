package settings

import (
	"sync/atomic"

	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

// polling is set for a client whose waiters poll (see SetPolling).
var polling = perclient.Declare(func(redis.UniversalClient) *atomic.Bool { return new(atomic.Bool) }, nil)

// SetPolling makes c's waiters wait by polling instead of through pub/sub,
// or through pub/sub again (see latchkey.SetPolling).
func SetPolling(c redis.UniversalClient, on bool) {
	polling.Get(c).Store(on)
}

// Polling reports whether c's waiters poll: whether c's calls must never
// subscribe.
func Polling(c redis.UniversalClient) bool {
	if c == nil {
		return false
	}
	p, ok := polling.Peek(c)
	return ok && p.Load()
}
