package rwlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
)

// Extend sets the lease of the caller's write hold to d from now: the hold
// of the owner carried by ctx, or without one the handle's current plain
// write hold. It never acquires: if the hold is gone, Extend returns an
// error matching latchkey.ErrNotHeld, and the hold is reported lost through
// Done, Err and LockContext. A d below latchkey.MinLease gets an error
// matching latchkey.ErrInvalidLease. Only an RWMutex made with WithLease is
// extended; with the watchdog, which sets its own lease at every renewal,
// Extend returns an error and changes nothing. An Extend that fails
// otherwise (ctx ended, a Redis error, latchkey.ErrNotReplicated) may or
// may not have applied, and Deadline then allows for both.
func (l *WriteLock) Extend(ctx context.Context, d time.Duration) error {
	return l.rw.extend(ctx, write, d)
}

// Deadline returns when the handle's current write hold (the one Done
// reports on) stops being known valid: its latest acquisition or extension
// sent, or the watchdog's latest renewal, plus the lease, less a drift
// allowance of a hundredth of the lease and 2ms; the zero time if there is
// none. It reads the local clock only: see mutex.Mutex.Deadline for why a
// holder that may have been paused should also fence its writes.
func (l *WriteLock) Deadline() time.Time { return l.rw.holds.Until(int(write)) }

// Extend sets the lease of the caller's read hold to d from now, every
// count of it: see WriteLock.Extend. It resets the hold's own timeouts and
// raises the lock's TTL to d if it was shorter, never lowering it, as
// other readers may need more.
func (l *ReadLock) Extend(ctx context.Context, d time.Duration) error {
	return l.rw.extend(ctx, read, d)
}

// Deadline returns when the handle's current read hold (the one Done
// reports on) stops being known valid, or the zero time if there is none:
// see WriteLock.Deadline.
func (l *ReadLock) Deadline() time.Time { return l.rw.holds.Until(int(read)) }

func (rw *RWMutex) extend(ctx context.Context, s side, d time.Duration) error {
	if err := lockcore.CheckExtend(ctx, rw.name, rw.client, &rw.cfg.Common, d); err != nil {
		return fmt.Errorf("rwlock: %s extend %s: %w", s, rw.name, err)
	}
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = rw.holds.CurrentPlain(int(s)); !ok {
			return fmt.Errorf("rwlock: %s extend %s: %w", s, rw.name, lockerr.ErrNotHeld)
		}
	}
	kind, ks := lease.HashLock, []string{rw.name}
	if s == read {
		kind, ks = renewRead, []string{rw.name, rw.timeoutPrefix(id)}
	}
	if err := rw.holds.Extend(ctx, rw.cfg.Sender(rw.client), kind, ks, field(id, s), d); err != nil {
		return fmt.Errorf("rwlock: %s extend %s: %w", s, rw.name, err)
	}
	return nil
}
