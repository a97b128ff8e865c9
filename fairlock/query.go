package fairlock

import (
	"context"
	"sync"
	"time"
)

// ForceUnlock deletes the lock whoever holds it and wakes the first waiter
// in the queue (Redisson's forceUnlock). It reports whether the lock was
// held. The queue is left as it is. The holder's hold is lost, and a
// latchkey holder is told within about a second (its Done closes, and Err
// says it was force-unlocked); of a Redisson client's forceUnlock, which
// tells only the first waiter, it learns at its next renewal or lease end.
// Like Unlock, it returns by ctx's deadline and its request goes on.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) { return m.l.ForceUnlock(ctx) }

// Delete deletes every key of the lock, Redisson's and latchkey's
// (Redisson's queue and deadlines, latchkey's heartbeats and fencing
// counter), if nobody holds it, and reports whether any existed
// (Redisson's delete). A held lock is left as it is, and Delete returns an
// error matching latchkey.ErrHeld: ForceUnlock releases a hold first.
// Waiters queued at that moment, Redisson's and latchkey's, are woken, and
// queue anew. Tokens keep increasing after the counter is deleted.
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
// lost it. Only latchkey's acquisitions draw tokens: Redisson's fair lock
// keeps none, so a Redisson client's hold has none either.
func (m *Mutex) Token() int64 { return m.l.Holds.Token() }

// Locker returns a sync.Locker whose Lock and Unlock call m's with a
// background context, for code written against sync.Locker (sync.Cond, for
// one). It has sync.Mutex's contract: Lock blocks until acquired, and an
// Unlock of a lock that the handle does not hold panics, as does any Redis
// error, since sync.Locker has no way to return one.
func (m *Mutex) Locker() sync.Locker { return m.l.Locker() }
