package permitsemaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
)

// Delete deletes the semaphore, whatever its permits: Redisson's keys (the
// count and the permits held) and every key latchkey keeps beside them (see
// the package doc). It reports whether the semaphore existed: it had a
// count, permits held, or waiters. Every Acquire waiting in the queue, in
// any latchkey process, then fails with an error matching
// latchkey.ErrDeleted, rather than wait for permits that nobody may ever set
// again. Redisson's waiters, whom Redisson's own delete leaves asleep, are
// woken; they find no permits and wait on, as on a semaphore that was never
// set. So does a latchkey waiter that was not queued yet (its client's Hub
// did not listen yet), whose client polls (latchkey.SetPolling) or missed the news (a broken connection),
// or that was granted permits and had not come for them yet (its attempt
// finds them gone). The permits held are gone: releasing or extending one
// fails with latchkey.ErrNotHeld, and a permit kept alive is lost (see
// Permit.KeepAlive), at once if it was kept through this handle.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) {
	existed, err := s.c.Delete(ctx)
	if err == nil || existed {
		s.kept.drop(fmt.Errorf("%w: %w", lockerr.ErrLost, lockerr.ErrDeleted))
	}
	return existed, err
}

// Expire makes the semaphore expire d from now, and reports whether it
// existed. Its count, the permits held (their leases) and the waiter queue
// expire together, all of it at once, and latchkey's notes beside them no
// later; a permit acquired later lives no longer than the count, as in
// Redisson. Waiters queued then are not told: they wait on as on a
// semaphore that was never set, and queue again with their next attempt.
// SetPermits sets the count anew, which drops its TTL, as in Redisson;
// TrySetPermitsTTL sets one. A d below latchkey.MinLease, zero included,
// or above latchkey.MaxLease returns an error matching
// latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) Expire(ctx context.Context, d time.Duration) (bool, error) {
	return s.c.Expire(ctx, d)
}

// TTL returns how long the semaphore lives unless deleted or given another
// TTL: 0 if it does not exist (it has no count and no permits held), and a
// negative duration if it does not expire. The waiter queue beside it is
// not counted: it lasts as long as its waiters.
func (s *Semaphore) TTL(ctx context.Context) (time.Duration, error) {
	return s.c.TTL(ctx)
}
