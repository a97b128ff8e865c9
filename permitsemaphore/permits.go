package permitsemaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
)

var countScript = scripts.Get("pes_count")

// AvailablePermits returns the number of permits available now, after
// returning expired permits to the pool: 0 for a semaphore that was never
// set, and a negative number after AddPermits or SetPermits took away more
// than were available.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	v, err := s.count(ctx)
	return v[0], err
}

// AcquiredPermits returns the number of permits held now, after returning
// expired permits to the pool.
func (s *Semaphore) AcquiredPermits(ctx context.Context) (int64, error) {
	v, err := s.count(ctx)
	return v[1], err
}

// Permits returns the total number of permits, available and held, after
// returning expired permits to the pool.
func (s *Semaphore) Permits(ctx context.Context) (int64, error) {
	v, err := s.count(ctx)
	return v[0] + v[1], err
}

// TrySetPermits sets the number of available permits to n if the semaphore
// has none set yet (its key does not exist), and hands them to waiters. It reports
// whether it set them; if the semaphore was already set it changes
// nothing. It returns an error matching latchkey.ErrInvalidPermits if n < 0
// or n > latchkey.MaxPermits.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.trySet(ctx, n, 0)
}

// TrySetPermitsTTL is TrySetPermits for a semaphore that lives ttl, as
// Redisson's trySetPermits with a time to live: set, it expires ttl from
// now, with the permits acquired meanwhile (see Expire). A ttl below
// latchkey.MinLease, zero included, or above latchkey.MaxLease returns an
// error matching latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	if err := lockopt.CheckLease(ttl); err != nil {
		return false, fmt.Errorf("permitsemaphore: set %d permits of %s for %v: %w", n, s.name, ttl, err)
	}
	return s.trySet(ctx, n, ttl)
}

func (s *Semaphore) trySet(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	if err := lockopt.CheckPermits(n, 0); err != nil {
		return false, fmt.Errorf("permitsemaphore: set %d permits of %s: %w", n, s.name, err)
	}
	v, err := s.change(ctx, "set permits of", opTrySet, n, ttl)
	return v == 1, err
}

// SetPermits sets the total number of permits, available and held, to n
// by setting the available count to n less the permits held now (Redisson's
// setPermits), and hands those available to waiters. If more than n are
// held, the available count goes below zero until enough are released. It
// returns an error matching latchkey.ErrInvalidPermits if n < 0 or n >
// latchkey.MaxPermits.
func (s *Semaphore) SetPermits(ctx context.Context, n int64) error {
	if err := lockopt.CheckPermits(n, 0); err != nil {
		return fmt.Errorf("permitsemaphore: set %d permits of %s: %w", n, s.name, err)
	}
	return s.add(ctx, opSet, n)
}

// AddPermits adds n permits, which may be negative, to the available count
// and hands them to waiters if n is positive. A negative n reduces the
// semaphore's capacity: the count may go below zero, and Acquire waits
// until releases bring it back above. The semaphore is created if it was
// never set. It returns an error matching latchkey.ErrInvalidPermits,
// changing nothing, if the count, or the permits in all, available and
// held, would go beyond latchkey.MaxPermits either way.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) error {
	if err := lockopt.CheckPermits(n, -lockopt.MaxPermits); err != nil {
		return fmt.Errorf("permitsemaphore: add %d permits of %s: %w", n, s.name, err)
	}
	return s.add(ctx, opAdd, n)
}

// add runs the add or set operation with n.
func (s *Semaphore) add(ctx context.Context, op string, n int64) error {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return fmt.Errorf("permitsemaphore: %s %d permits of %s: %w", op, n, s.name, err)
	}
	pub, err := s.cfg.Publish(ctx, s.client)
	if err == nil {
		rep := s.resend(ctx, s.write(op, pub, "", n, keys.Once(s.name, owner.New())))
		if _, err = s.handed(rep); err == nil {
			err = rep.SyncErr()
		}
		err = lockopt.PermitsError(err)
	}
	if err != nil {
		return fmt.Errorf("permitsemaphore: %s %d permits of %s: %w", op, n, s.name, err)
	}
	return nil
}

// count runs the count script and returns {available, held}.
func (s *Semaphore) count(ctx context.Context) ([2]int64, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return [2]int64{}, fmt.Errorf("permitsemaphore: permits of %s: %w", s.name, err)
	}
	pub, err := s.cfg.Publish(ctx, s.client)
	if err != nil {
		return [2]int64{}, fmt.Errorf("permitsemaphore: permits of %s: %w", s.name, err)
	}
	args := handoff.ScriptArgs(s.client, time.Now(), pub, handoff.QueueTimeout)
	v, err := scripts.Ints(rt.Run(ctx, s.client, countScript, s.countKeys(), args...))
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("latchkey: script reply: want 2 integers, got %d", len(v))
	}
	if err != nil {
		return [2]int64{}, fmt.Errorf("permitsemaphore: permits of %s: %w", s.name, err)
	}
	return [2]int64{v[0], v[1]}, nil
}
