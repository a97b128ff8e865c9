package semaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
)

// TrySetPermits sets the number of available permits to n if the semaphore
// has none set yet (its key does not exist), and hands them to waiters. It reports
// whether it set them; if the semaphore was already set it changes nothing.
// It returns an error matching latchkey.ErrInvalidPermits if n < 0 or n >
// latchkey.MaxPermits.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.c.TrySetPermits(ctx, n)
}

// TrySetPermitsTTL is TrySetPermits for a semaphore that lives ttl: set,
// it expires ttl from now, as after Expire (Redisson's trySetPermits with
// a time to live). A ttl below latchkey.MinLease, zero included, or above
// latchkey.MaxLease returns an error matching latchkey.ErrInvalidLease and
// changes nothing.
func (s *Semaphore) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	return s.c.TrySetPermitsTTL(ctx, n, ttl)
}

// SetPermits sets the number of available permits to n, whatever it was,
// and hands them to waiters. Permits held at the time are not counted: their
// holders' later Release calls add to n. SetPermits returns an error
// matching latchkey.ErrInvalidPermits if n < 0 or n > latchkey.MaxPermits.
func (s *Semaphore) SetPermits(ctx context.Context, n int64) error {
	return s.c.SetPermits(ctx, n)
}

// AddPermits adds n permits, which may be negative, to the available count
// and hands them to waiters if some are then available. A negative n reduces the
// semaphore's capacity: the count may go below zero, and Acquire waits
// until releases bring it back above. The semaphore is created if it was
// never set. Unlike Release, AddPermits rewrites the key, dropping any TTL
// set on it, as Redisson's addPermits does. It returns an error matching
// latchkey.ErrInvalidPermits, changing nothing, if the count would go
// beyond latchkey.MaxPermits either way.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) error {
	return s.c.AddPermits(ctx, n)
}

// AvailablePermits returns the number of permits available now: 0 for a
// semaphore that was never set, and a negative number after AddPermits
// took away more than were available. Permits granted to a waiter that did
// not take them within the grace count as available, as they are: the
// next call on the semaphore, or the client whose call granted them, puts
// them back in the count that Redisson reads.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	n, _, err := s.c.Count(ctx)
	return n, err
}

// DrainPermits takes every available permit and returns how many it took.
// It takes none, returns 0 and changes nothing when none are available,
// including when the count is negative (where Redisson would reset it to
// zero, creating permits). Like Redisson's drainPermits it wakes nobody.
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	err := rt.Usable(ctx, s.c.Name, s.c.Client)
	var v int64
	if err == nil {
		rep, _ := s.c.Sender().Resend(ctx, scripts.SemDrain{Sem: s.c.Keys, Record: s.c.Record()}.Request())
		if v, err = scripts.Int(rep.Cmd); err == nil && v > 0 {
			if err = rep.SyncErr(); err != nil {
				return v, s.c.Errorf(fmt.Errorf("drained on the master: %w", err), "drain")
			}
		}
	}
	if err != nil {
		return 0, s.c.Errorf(err, "drain")
	}
	return v, nil
}
