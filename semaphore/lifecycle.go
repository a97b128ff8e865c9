package semaphore

import (
	"context"
	"time"
)

// Delete deletes the semaphore, whatever its count: Redisson's key and every
// key latchkey keeps beside it (see the package doc). It reports whether the
// semaphore existed: it had a count, permits granted to a waiter, or
// waiters. Every Acquire waiting in the queue, in any latchkey process, then
// fails with an error matching latchkey.ErrDeleted, rather than wait for
// permits that nobody may ever set again. Redisson's waiters, whom
// Redisson's own delete leaves asleep, are woken; they find no permits and
// wait on, as on a semaphore that was never set. So does a latchkey waiter
// that was not queued yet (its client's Hub did not listen yet) or whose
// client polls (latchkey.SetPolling) or missed the news (a broken
// connection). Permits acquired before are not affected: releasing them
// creates the semaphore anew, as in Redisson.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) {
	return s.c.Delete(ctx)
}

// Expire makes the semaphore expire d from now, and reports whether it
// existed. Its count, the permits granted to waiters and not taken yet,
// and the waiter queue expire together, all of it at once; latchkey's
// notes beside them no later. Waiters queued then are not told: they wait
// on as on a semaphore that was never set, and queue again with their next
// attempt. Calls that set the count anew drop the TTL, as Redisson's
// do (SetPermits, AddPermits); TrySetPermitsTTL sets one. A d below
// latchkey.MinLease, zero included, or above latchkey.MaxLease returns an
// error matching latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) Expire(ctx context.Context, d time.Duration) (bool, error) {
	return s.c.Expire(ctx, d)
}

// TTL returns how long the semaphore lives unless deleted or given another
// TTL: 0 if it does not exist (it has no count and no permits granted),
// and a negative duration if it does not expire. The waiter queue beside
// it is not counted: it lasts as long as its waiters.
func (s *Semaphore) TTL(ctx context.Context) (time.Duration, error) {
	return s.c.TTL(ctx)
}
