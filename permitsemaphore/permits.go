package permitsemaphore

import (
	"context"
	"time"
)

// AvailablePermits returns the number of permits available now, after
// returning expired permits to the pool: 0 for a semaphore that was never
// set, and a negative number after AddPermits or SetPermits took away more
// than were available.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	available, _, err := s.c.Count(ctx)
	return available, err
}

// AcquiredPermits returns the number of permits held now, after returning
// expired permits to the pool.
func (s *Semaphore) AcquiredPermits(ctx context.Context) (int64, error) {
	_, held, err := s.c.Count(ctx)
	return held, err
}

// Permits returns the total number of permits, available and held, after
// returning expired permits to the pool.
func (s *Semaphore) Permits(ctx context.Context) (int64, error) {
	available, held, err := s.c.Count(ctx)
	return available + held, err
}

// TrySetPermits sets the number of available permits to n if the semaphore
// has none set yet (its key does not exist), and hands them to waiters. It reports
// whether it set them; if the semaphore was already set it changes
// nothing. It returns an error matching latchkey.ErrInvalidPermits if n < 0
// or n > latchkey.MaxPermits.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.c.TrySetPermits(ctx, n)
}

// TrySetPermitsTTL is TrySetPermits for a semaphore that lives ttl, as
// Redisson's trySetPermits with a time to live: set, it expires ttl from
// now, with the permits acquired meanwhile (see Expire). A ttl below
// latchkey.MinLease, zero included, or above latchkey.MaxLease returns an
// error matching latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	return s.c.TrySetPermitsTTL(ctx, n, ttl)
}

// SetPermits sets the total number of permits, available and held, to n
// by setting the available count to n less the permits held now (Redisson's
// setPermits), and hands those available to waiters. If more than n are
// held, the available count goes below zero until enough are released. It
// returns an error matching latchkey.ErrInvalidPermits if n < 0 or n >
// latchkey.MaxPermits.
func (s *Semaphore) SetPermits(ctx context.Context, n int64) error {
	return s.c.SetPermits(ctx, n)
}

// AddPermits adds n permits, which may be negative, to the available count
// and hands them to waiters if n is positive. A negative n reduces the
// semaphore's capacity: the count may go below zero, and Acquire waits
// until releases bring it back above. The semaphore is created if it was
// never set. It returns an error matching latchkey.ErrInvalidPermits,
// changing nothing, if the count, or the permits in all, available and
// held, would go beyond latchkey.MaxPermits either way.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) error {
	return s.c.AddPermits(ctx, n)
}
