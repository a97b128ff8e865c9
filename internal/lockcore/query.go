package lockcore

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/owner"
)

// IsLocked reports whether anyone holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return false, l.errorf("query", err)
	}
	ok, err := hold.IsLocked(ctx, l.Client, l.Name)
	if err != nil {
		return false, l.errorf("query", err)
	}
	return ok, nil
}

// HoldCount returns how many holds the caller's owner has: the owner
// carried by ctx, or without one the handle's current plain hold.
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return 0, l.errorf("query", err)
	}
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = l.Holds.CurrentPlain(hold.Any); !ok {
			return 0, nil
		}
	}
	n, err := hold.Count(ctx, l.Client, l.Name, id)
	if err != nil {
		return 0, l.errorf("query", err)
	}
	return n, nil
}

// TTL returns how long the lock stays held unless renewed or unlocked: 0
// if it is not held, negative if its key has no TTL.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return 0, l.errorf("query", err)
	}
	d, err := hold.TTL(ctx, l.Client, l.Name)
	if err != nil {
		return 0, l.errorf("query", err)
	}
	return d, nil
}

// Done returns the channel of the handle's current hold (see hold.Table).
func (l *Lock) Done() <-chan struct{} { return l.Holds.Done(hold.Any) }

// Err returns why the handle's current hold ended, if it did.
func (l *Lock) Err() error { return l.Holds.Err(hold.Any) }

// Locker returns a sync.Locker over Lock and Unlock (see hold.Locker).
func (l *Lock) Locker() sync.Locker {
	return hold.Locker(l.Pkg, func(ctx context.Context) error {
		_, err := l.Lock(ctx, -1)
		return err
	}, l.Unlock)
}
