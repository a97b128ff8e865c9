package semaphore

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/semcore"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Semaphore is a distributed counting semaphore named by a Redis key. It
// must be created with New. A Semaphore is safe for concurrent use by many
// goroutines. Every handle on the same name, in any process, sees the same
// permits; a handle only remembers, for a moment, the permits granted to
// its Acquire calls (see the package doc).
type Semaphore struct{ c *semcore.Core }

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits, AddPermits or
// Release, and a semaphore that was never set has none. Any string is a
// valid name, the empty one included (see the package latchkey doc on
// names): on a Redis Cluster, a name whose keys would not share a hash slot
// makes every method of the Semaphore that talks to Redis return an error
// matching latchkey.ErrCrossSlot, without sending anything. New panics if
// client is nil or an option is invalid: these are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Semaphore{semcore.New(client, "semaphore", name, false, cfg.Base)}
}

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.c.Name }

// Acquire takes n permits, blocking until n are available to it or ctx is
// done, and returns nil once it has them. Waiters are served in order: a
// waiter for n permits waits for those ahead of it, and those behind it
// wait for it (see the package doc). When ctx ends first Acquire returns
// an error that matches ctx.Err() and leaves the semaphore unchanged:
// permits granted while it was giving up are given back. A Redis error is
// returned wrapped; when one cuts a request off, Redis may still have
// granted the permits, which are then given back in the background if the
// request can be traced within its record's lifetime, and are otherwise
// lost like a crashed holder's (see the package doc). Acquire returns an
// error matching latchkey.ErrInvalidPermits if n < 1 or n >
// latchkey.MaxPermits, and one matching
// latchkey.ErrDeleted if the semaphore is deleted while it waits (see
// Delete).
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	_, err := s.acquire(ctx, n, -1)
	return err
}

// TryAcquire takes n permits if they become available to it within wait;
// a wait of zero or less makes a single attempt, which fails while others
// wait. It returns true if the permits were taken, and false with a nil
// error if the wait ran out, leaving the semaphore unchanged. Other
// failures are as for Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	return s.acquire(ctx, n, max(wait, 0))
}

func (s *Semaphore) acquire(ctx context.Context, n int64, budget time.Duration) (bool, error) {
	_, ok, err := s.c.Acquire(ctx, budget, semcore.Acquisition{N: n, Undo: func(ctx context.Context) { _ = s.release(ctx, n) }})
	return ok, err
}

// Release gives n permits back and hands them to the waiters at the head
// of the queue that they satisfy, in order. It does not check that the
// caller acquired them: any goroutine or process may release, and
// releasing more than was acquired raises the count, as in Redisson. A
// semaphore that was never set is created. Release returns an error
// matching latchkey.ErrInvalidPermits, releasing nothing, if n < 1 or the
// count would go above latchkey.MaxPermits, or the Redis error wrapped; in
// the latter case the permits may or may not have been given back.
//
// Release returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	err := rt.Usable(ctx, s.c.Name, s.c.Client)
	if err == nil {
		err = lockopt.CheckPermits(n, 1)
	}
	if err == nil {
		_, err = wait.Cleanup(ctx, s.c.Client, func(ctx context.Context) (struct{}, error) {
			err := s.release(ctx, n)
			if err == nil {
				rt.Report(s.c.Client, rt.Released, rt.Event{Kind: "semaphore", Name: s.c.Name})
			}
			return struct{}{}, err
		})
		if !wait.Pending(err) {
			return err
		}
	}
	return s.c.Errorf(err, "release %d permits of", n)
}

// release sends the release of n permits.
func (s *Semaphore) release(ctx context.Context, n int64) error {
	_, rep, err := s.c.Release(ctx, scripts.SemRelease{Sem: s.c.Keys, Permits: n, YieldFor: handoff.Yield, Record: s.c.Record()}.Request())
	if err == nil {
		err = rep.SyncErr()
	}
	if err != nil {
		return s.c.Errorf(err, "release %d permits of", n)
	}
	return nil
}
