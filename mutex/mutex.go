package mutex

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/redis/go-redis/v9"
)

// A Mutex is a distributed reentrant lock named by a Redis key. It must be
// created with New. A Mutex is safe for concurrent use by many goroutines.
type Mutex struct {
	l *lockcore.Lock
}

// New returns a Mutex for the lock called name on client. It does no I/O.
// Any string is a valid name, the empty one included (see the package
// latchkey doc on names): on a Redis Cluster, a name whose keys would not
// share a hash slot makes every method of the Mutex that talks to Redis
// return an error matching latchkey.ErrCrossSlot, without sending anything.
// New panics if client is nil or an option is invalid: these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Mutex {
	keys.MustClient("mutex", client)
	cfg := &config{Common: lockopt.Common{Watchdog: DefaultWatchdogTimeout}}
	for _, o := range opts {
		o(cfg)
	}
	return &Mutex{lockcore.New(client, "mutex", name, &cfg.Common, newProtocol(client, name, cfg))}
}

// Name returns the lock's name, which is also its Redis key.
func (m *Mutex) Name() string { return m.l.Name }

// Lock acquires m, blocking until it is available or ctx is done. If the
// owner carried by ctx (see latchkey.WithOwner) already holds m, Lock
// increments the hold count and returns at once; without an owner a Lock
// waits for every other hold, including one taken through m. On failure Lock
// returns an error that matches ctx.Err() or wraps the Redis error, and
// leaves m as it was.
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.l.Lock(ctx, -1)
	return err
}

// TryLock acquires m if it becomes available within wait; a wait of zero or
// less makes a single attempt. It returns true if m was acquired, and false
// with a nil error if the wait ran out. Other failures are as for Lock.
// A lock released while others were queued goes to the first of them
// (see the package documentation), so a single attempt never takes it
// from the queue.
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
// is deleted and one waiter is woken. Unlock returns an error matching
// latchkey.ErrNotHeld if the owner does not hold m, including when its hold
// was lost; the lock is then left untouched. An Unlock that fails without
// an answer still ends the hold for the handle, as Redisson's does: nothing
// renews it, and if the release did not apply the lock expires with its
// lease. One that the master applied but no replica acknowledged returns an
// error matching latchkey.ErrNotReplicated (see WithReplicaSync).
//
// Unlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (m *Mutex) Unlock(ctx context.Context) error { return m.l.Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it and wakes a waiter
// (Redisson's forceUnlock). It reports whether the lock was held. The
// holder's hold is lost, and a latchkey holder is told within about a
// second (its Done closes, and Err says it was force-unlocked), as it is
// of a Redisson client's forceUnlock.
// Like Unlock, it returns by ctx's deadline and its request goes on.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) { return m.l.ForceUnlock(ctx) }

// Delete deletes every key of the lock, Redisson's and latchkey's (the
// fencing counter, the waiter queue), if nobody holds it, and reports
// whether any existed (Redisson's delete). A held lock is left as it is,
// and Delete returns an error matching latchkey.ErrHeld: ForceUnlock
// releases a hold first. Waiters queued at that moment, while the lock is
// free, are told to look again, and queue anew. Tokens keep increasing
// after the counter is deleted (see Token).
func (m *Mutex) Delete(ctx context.Context) (bool, error) { return m.l.Delete(ctx) }

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) { return m.l.IsLocked(ctx) }

// HoldCount returns how many holds the caller's owner has on the lock: the
// owner carried by ctx, or without one the handle's current plain hold (0
// or 1). It returns 0 if that owner does not hold it.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return m.l.HoldCount(ctx) }

// TTL returns how long the lock will stay held unless renewed or unlocked:
// 0 if it is not held, and a negative duration if its key has no TTL (a
// holder outside latchkey removed it).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) { return m.l.TTL(ctx) }

// Done returns a channel that is closed when the current hold of m ends,
// by Unlock or by loss; Err then tells which. If m is not held, Done returns
// the channel of the last hold, or a closed channel if there was none. To
// watch one acquisition whatever else the handle takes, use LockContext.
func (m *Mutex) Done() <-chan struct{} { return m.l.Done() }

// Err returns nil while m is held and after its last hold was released by
// Unlock. After a hold ended without Unlock (its lease expired, the key was
// deleted or force-unlocked, the watchdog could not renew it) Err returns an
// error matching latchkey.ErrLost that says why.
func (m *Mutex) Err() error { return m.l.Err() }

// Token returns the fencing token of the current hold: a number that
// strictly increases with every acquisition of the lock name, by any handle
// or process. It returns 0 if m is not held. A new lock's first token comes
// from the server's clock (in microseconds), so tokens keep increasing
// after the counter expired (see the package doc's keys) or a restart
// lost it.
func (m *Mutex) Token() int64 { return m.l.Holds.Token() }

// Locker returns a sync.Locker whose Lock and Unlock call m's with a
// background context, for code written against sync.Locker (sync.Cond, for
// one). It has sync.Mutex's contract: Lock blocks until acquired, and an
// Unlock of a lock that the handle does not hold panics, as does any Redis
// error, since sync.Locker has no way to return one.
func (m *Mutex) Locker() sync.Locker { return m.l.Locker() }
