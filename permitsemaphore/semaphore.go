package permitsemaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/semcore"
	"github.com/redis/go-redis/v9"
)

// A Semaphore is a distributed counting semaphore whose permits have ids
// and leases, named by a Redis key. It must be created with New. A
// Semaphore is safe for concurrent use by many goroutines. Every handle on
// the same name, in any process, sees the same permits; a handle only
// remembers, for a moment, the permits granted to its Acquire calls (see
// the package doc).
type Semaphore struct {
	c    *semcore.Core
	kept kept // the permits kept alive through this handle
}

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits or AddPermits,
// and a semaphore that was never set has none. Any string is a valid name,
// the empty one included (see the package latchkey doc on names): on a
// Redis Cluster, a name whose keys would not share a hash slot makes every
// method of the Semaphore and of its Permits that talks to Redis return an
// error matching latchkey.ErrCrossSlot, without sending anything. New
// panics if client is nil or an option is invalid: these are programming
// errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Semaphore{c: semcore.New(client, "permitsemaphore", name, true, cfg.Base)}
}

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.c.Name }

// Acquire takes a permit, blocking until one is available to it or ctx is
// done, and returns it. Waiters are served in order (see the package
// doc). The permit returns to the pool by itself lease after it was taken
// unless released or extended before; Forever makes it permanent. A lease
// that Lease refuses fails at once with an error matching
// latchkey.ErrInvalidLease. When ctx ends first Acquire returns an error
// that matches ctx.Err(); otherwise it returns the Redis error, wrapped.
// On failure the semaphore is left unchanged: a permit whose grant landed
// while Acquire was giving up is released. Asking a semaphore for more
// permits than it has in all, available and held, fails at once with an
// error matching latchkey.ErrInvalidPermits rather than wait for AddPermits,
// and one deleted while Acquire waits fails it with an error matching
// latchkey.ErrDeleted (see Delete).
func (s *Semaphore) Acquire(ctx context.Context, lease Lease) (*Permit, error) {
	ps, _, err := s.acquire(ctx, 1, -1, lease)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TryAcquire takes a permit if one becomes available to it within wait; a
// wait of zero or less makes a single attempt, which fails while others
// wait. It returns the permit and true
// if it was taken, and nil and false with a nil error if the wait ran out,
// leaving the semaphore unchanged. Other failures are as for Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, wait time.Duration, lease Lease) (*Permit, bool, error) {
	ps, ok, err := s.acquire(ctx, 1, max(wait, 0), lease)
	if !ok {
		return nil, false, err
	}
	return ps[0], true, nil
}

// AcquireN takes n permits at once, all or none, blocking until n are
// available or ctx is done, and returns them; each has its own id and the
// same lease. It returns an error matching latchkey.ErrInvalidPermits if
// n < 1 or n > MaxAcquire, or if the semaphore has fewer than n in all
// (see Acquire). Nothing in proportion to n is made before the server
// grants the permits: the ids follow from the first. Other failures are as
// for Acquire.
func (s *Semaphore) AcquireN(ctx context.Context, n int, lease Lease) ([]*Permit, error) {
	ps, _, err := s.acquire(ctx, n, -1, lease)
	return ps, err
}

// TryAcquireN takes n permits at once if n become available within wait;
// a wait of zero or less makes a single attempt. It returns the permits
// and true if they were taken, and nil and false with a nil error if the
// wait ran out, leaving the semaphore unchanged. Other failures are as for
// AcquireN.
func (s *Semaphore) TryAcquireN(ctx context.Context, n int, wait time.Duration, lease Lease) ([]*Permit, bool, error) {
	return s.acquire(ctx, n, max(wait, 0), lease)
}

func (s *Semaphore) acquire(ctx context.Context, n int, budget time.Duration, lease Lease) ([]*Permit, bool, error) {
	err := checkAcquire(n)
	if err == nil {
		err = lease.check()
	}
	var first string
	if err == nil {
		first, err = newFirst()
	}
	if err != nil {
		return nil, false, s.c.Errorf(err, "acquire %d permits of", n)
	}
	// The queue entry names the permits by their number and first id, from
	// which the others follow: a release that grants them to this call
	// acquires them by their ids.
	since, ok, err := s.c.Acquire(ctx, budget, semcore.Acquisition{
		N: int64(n), First: first,
		LeaseEnd: func(sent time.Time) int64 { return leaseEnd(sent, lease) },
		Undo:     func(ctx context.Context) { _, _ = s.release(ctx, false, permitIDs(first, n)...) },
	})
	if !ok {
		return nil, false, err
	}
	// The lease was set by an attempt sent no sooner than since: a permit
	// kept alive counts its validity from there.
	ps := newPermits(s, permitIDs(first, n))
	for _, p := range ps {
		p.lease, p.since = lease, since
	}
	return ps, true, nil
}

// MaxAcquire is the most permits one acquisition takes (AcquireN,
// TryAcquireN): the server stores every one of them in one script, which
// holds it up (about a second per 100,000 on a small machine). Redisson's
// acquisition takes fewer still: it passes the ids as arguments, and Lua
// unpacks no more than about 8,000 of them.
const MaxAcquire = 1 << 16

// checkAcquire returns nil if one acquisition may take n permits, and
// otherwise an error matching lockerr.ErrInvalidPermits that says why.
func checkAcquire(n int) error {
	if n > MaxAcquire {
		return fmt.Errorf("%w: %d is above the %d that one acquisition takes", lockerr.ErrInvalidPermits, n, MaxAcquire)
	}
	return lockopt.CheckPermits(int64(n), 1)
}

// A Lease is how long a permit stays held unless released or extended:
// when it runs out, the permit returns to the pool by itself, so a crashed
// holder's permits come back. Forever, the zero Lease, makes the permit
// permanent, and it is the only lease that does. A negative lease, such as
// Lease(time.Until(deadline)) once the deadline has passed, one below
// latchkey.MinLease (10ms), too short to outlive the round trip that takes
// the permit, and one above latchkey.MaxLease (292 years), longer than
// LeaseTime could report, are refused: a call given one returns an error
// matching latchkey.ErrInvalidLease, does no I/O and changes nothing.
// Lease has a type of its own so that it cannot be swapped with a wait by
// mistake: TryAcquire(ctx, time.Second, permitsemaphore.Lease(time.Minute)).
type Lease time.Duration

// Forever is the lease of a permanent permit.
const Forever Lease = 0

// check returns nil if l is Forever or a lease a permit can have, and
// otherwise an error matching lockerr.ErrInvalidLease.
func (l Lease) check() error {
	if l == Forever {
		return nil
	}
	return lockopt.CheckLease(time.Duration(l))
}

// leaseEnd returns the lease end a permit taken at now stores; lease has
// passed check.
func leaseEnd(now time.Time, lease Lease) int64 {
	if lease == Forever {
		return scripts.PermanentLease
	}
	return now.UnixMilli() + scripts.Ms(time.Duration(lease))
}
