package latchkey

import (
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// Close releases what this process keeps for client behind the scenes:
// permits granted to the client's semaphore waiters that gave up, or that
// Close ends, are handed back, and those its calls granted to others whose
// grace is over are put back in the count (Close waits for them at most
// 2s: see packages semaphore and permitsemaphore); the shared pub/sub Hub
// (waiters blocked on it return an error matching ErrClosed), the
// watchdog (holds it was renewing are reported lost and expire with their
// lease, as when a Redisson client shuts down), what it learnt of the
// client's servers, and the client's settings (SetHooks,
// SetRideOut), so that a process that makes and closes clients keeps
// nothing of those it closed. Call it before closing client. Primitives
// used after Close start afresh, with the default settings.
func Close(client redis.UniversalClient) error {
	return rt.Close(client)
}
