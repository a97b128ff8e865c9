package fairlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/redis/go-redis/v9"
)

// A Mutex is a distributed reentrant lock named by a Redis key that is
// granted in the order it was asked for. It must be created with New. A
// Mutex is safe for concurrent use by many goroutines.
type Mutex struct {
	l *lockcore.Lock
}

// New returns a Mutex for the fair lock called name on client. It does no
// I/O. Any string is a valid name, the empty one included (see the package
// latchkey doc on names): on a Redis Cluster, a name whose keys would not
// share a hash slot makes every method of the Mutex that talks to Redis
// return an error matching latchkey.ErrCrossSlot, without sending anything.
// New panics if client is nil or an option is invalid: these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Mutex {
	keys.MustClient("fairlock", client)
	cfg := &config{
		Common:   lockopt.Common{Watchdog: DefaultWatchdogTimeout},
		wait:     DefaultWaitTimeout,
		liveness: DefaultLivenessTimeout,
	}
	for _, o := range opts {
		o(cfg)
	}
	return &Mutex{lockcore.New(client, "fairlock", name, &cfg.Common, newProtocol(client, name, cfg))}
}

// Name returns the lock's name, which is also its Redis key.
func (m *Mutex) Name() string { return m.l.Name }

// Lock acquires m, blocking until it is available or ctx is done. Callers
// that have to wait are served in the order they started waiting, across
// all processes. If the owner carried by ctx (see latchkey.WithOwner)
// already holds m, Lock increments the hold count and returns at once;
// without an owner a Lock waits for every other hold, including one taken
// through m. On failure Lock returns an error that matches ctx.Err() or
// wraps the Redis error, and leaves m and the queue as they were.
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.l.Lock(ctx, -1)
	return err
}

// TryLock acquires m if it becomes available within wait, queueing in the
// meantime like Lock; a wait of zero or less makes a single attempt, which
// succeeds only if m is free and nobody is queued for it. TryLock returns
// true if m was acquired, and false with a nil error if the wait ran out;
// its place in the queue is then given up. Other failures are as for Lock.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return m.l.Lock(ctx, max(wait, 0))
}

// LockContext acquires m as Lock does and returns a copy of ctx that is
// cancelled when this hold ends: when it is unlocked (its last count, with
// an owner), or when it is lost, and then context.Cause reports an error
// matching latchkey.ErrLost that says why. Work done under the hold can
// watch the returned context, whoever else uses the handle; Done and Err
// report on the handle's latest hold instead.
func (m *Mutex) LockContext(ctx context.Context) (context.Context, error) {
	return m.l.LockContext(ctx)
}

// Unlock releases one hold of m. With an owner in ctx it releases that
// owner's hold (even one taken in another process, see
// latchkey.WithOwnerID); without one it releases the handle's current plain
// hold, whichever goroutine took it. When the last hold is released the key
// is deleted and the first waiter in the queue, only that one, is woken.
//
// Unlock returns an error matching latchkey.ErrNotHeld if the owner does
// not hold m, including when its hold was lost; the lock is then left
// untouched. Redisson's fair unlock reports success when the lock key is
// gone; Unlock reports ErrNotHeld like every other latchkey unlock, but
// like Redisson it still wakes the first waiter if the lock is free.
//
// Unlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (m *Mutex) Unlock(ctx context.Context) error { return m.l.Unlock(ctx) }
