// Package shared keeps the parts of a go-redis client's runtime
// (internal/perclient) that the client's primitives share: the Hub its
// waiters listen through, which also settles once whether its scripts
// publish with PUBLISH or SPUBLISH, and the watchdog that renews its
// holds. Both are made on first use; Close lets go of them with the rest
// of the runtime.
package shared

import (
	"context"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/perclient"
	"github.com/redis/go-redis/v9"
)

// The hub is declared before the watchdog, so that it closes after it:
// the watchdog's holds are declared lost first. The Book of parked permits
// is closed by Close first of all (see Close).
var (
	hub      = perclient.Declare(func(c redis.UniversalClient) *notify.Hub { return notify.New(c) }, (*notify.Hub).Close)
	watchdog = perclient.Declare(newWatchdog, func(s *lease.Scheduler) error { s.Close(); return nil })
	parked   = perclient.Declare(newBook, (*Book).close)
)

// Hub returns the Hub shared by every primitive of this process that uses
// the client and was given no Hub of its own; its connection closes when
// idle.
func Hub(c redis.UniversalClient) *notify.Hub { return hub.Get(c) }

// newWatchdog returns the scheduler of c's holds, which has the shared Hub
// watch their servers for a return (see restarts).
func newWatchdog(c redis.UniversalClient) *lease.Scheduler {
	s := lease.New(c)
	s.SetWatcher(newRestarts(c, hub.Get(c), s.Recheck))
	watchDials(c)
	return s
}

// Watchdog returns the scheduler that renews the client's holds.
func Watchdog(c redis.UniversalClient) *lease.Scheduler { return watchdog.Get(c) }

// Publish returns the command the scripts publish with, PUBLISH or
// SPUBLISH: that of h, the Hub a primitive waits through, or of the shared
// Hub when h is nil, so that publishers and waiters agree. A Hub settles
// its mode once, on first use.
func Publish(ctx context.Context, c redis.UniversalClient, h *notify.Hub) (string, error) {
	if h == nil {
		h = Hub(c)
	}
	return h.PublishCommand(ctx)
}

// Close lets go of the runtime of c: the permits its semaphore waiters
// that gave up may hold are handed back, and its purges due after its
// grants run (see Book), waiting for them at most closeWait; waiters on
// the shared Hub return an error matching ErrClosed, the holds the
// watchdog renewed are declared lost (they expire with their lease, as
// when a Redisson client shuts down), and what the client's settings and
// caches held is forgotten. A later use starts afresh. The Book closes
// first, while the rest of the runtime its requests use is there: were
// it closed with the other parts, those requests would make them again.
func Close(c redis.UniversalClient) error {
	if b, ok := parked.Peek(c); ok {
		_ = b.close()
	}
	return perclient.Close(c)
}
