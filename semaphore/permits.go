package semaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
)

var (
	drainScript = scripts.Get("sem_drain")
	countScript = scripts.Get("sem_count")
)

// TrySetPermits sets the number of available permits to n if the semaphore
// has none set yet (its key does not exist), and hands them to waiters. It reports
// whether it set them; if the semaphore was already set it changes nothing.
// It returns an error matching latchkey.ErrInvalidPermits if n < 0 or n >
// latchkey.MaxPermits.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.trySet(ctx, n, 0)
}

// TrySetPermitsTTL is TrySetPermits for a semaphore that lives ttl: set,
// it expires ttl from now, as after Expire (Redisson's trySetPermits with
// a time to live). A ttl below latchkey.MinLease, zero included, or above
// latchkey.MaxLease returns an error matching latchkey.ErrInvalidLease and
// changes nothing.
func (s *Semaphore) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	if err := lockopt.CheckLease(ttl); err != nil {
		return false, fmt.Errorf("semaphore: set %d permits of %s for %v: %w", n, s.name, ttl, err)
	}
	return s.trySet(ctx, n, ttl)
}

func (s *Semaphore) trySet(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	if err := lockopt.CheckPermits(n, 0); err != nil {
		return false, fmt.Errorf("semaphore: set %d permits of %s: %w", n, s.name, err)
	}
	v, err := s.change(ctx, "set permits of", opTrySet, n, ttl)
	return v == 1, err
}

// SetPermits sets the number of available permits to n, whatever it was,
// and hands them to waiters. Permits held at the time are not counted: their
// holders' later Release calls add to n. SetPermits returns an error
// matching latchkey.ErrInvalidPermits if n < 0 or n > latchkey.MaxPermits.
func (s *Semaphore) SetPermits(ctx context.Context, n int64) error {
	if err := lockopt.CheckPermits(n, 0); err != nil {
		return fmt.Errorf("semaphore: set %d permits of %s: %w", n, s.name, err)
	}
	return s.add(ctx, n, opSet)
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
	if err := lockopt.CheckPermits(n, -lockopt.MaxPermits); err != nil {
		return fmt.Errorf("semaphore: add %d permits of %s: %w", n, s.name, err)
	}
	return s.add(ctx, n, opAdd)
}

func (s *Semaphore) add(ctx context.Context, n int64, mode string) error {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return fmt.Errorf("semaphore: %s %d permits of %s: %w", mode, n, s.name, err)
	}
	pub, err := s.cfg.Publish(ctx, s.client)
	if err == nil {
		rep := s.resend(ctx, s.write(mode, "", n, pub, keys.Once(s.name, owner.New())))
		if _, err = s.answer(rep, pub); err == nil {
			err = rep.SyncErr()
		}
		err = lockopt.PermitsError(err)
	}
	if err != nil {
		return fmt.Errorf("semaphore: %s %d permits of %s: %w", mode, n, s.name, err)
	}
	return nil
}

// AvailablePermits returns the number of permits available now: 0 for a
// semaphore that was never set, and a negative number after AddPermits
// took away more than were available. Permits granted to a waiter that did
// not take them within the grace count as available, as they are: the
// next call on the semaphore, or the client whose call granted them, puts
// them back in the count that Redisson reads.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return 0, fmt.Errorf("semaphore: permits of %s: %w", s.name, err)
	}
	v, err := scripts.Int(rt.Run(ctx, s.client, countScript, []string{s.name, s.keys[4]}))
	if err != nil {
		return 0, fmt.Errorf("semaphore: permits of %s: %w", s.name, err)
	}
	return v, nil
}

// DrainPermits takes every available permit and returns how many it took.
// It takes none, returns 0 and changes nothing when none are available,
// including when the count is negative (where Redisson would reset it to
// zero, creating permits). Like Redisson's drainPermits it wakes nobody.
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return 0, fmt.Errorf("semaphore: drain %s: %w", s.name, err)
	}
	rep, _ := rt.Resend(ctx, s.client, drainScript, rt.Write{Keys: []string{s.name}, Once: keys.Once(s.name, owner.New()), Sole: true, Sync: s.cfg.Sync.Timeout()})
	v, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, fmt.Errorf("semaphore: drain %s: %w", s.name, err)
	}
	if err := rep.SyncErr(); err != nil && v > 0 {
		return v, fmt.Errorf("semaphore: drain %s: drained on the master: %w", s.name, err)
	}
	return v, nil
}
