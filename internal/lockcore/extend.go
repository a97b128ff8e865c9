package lockcore

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// ErrWatched is Extend's answer on a lock kept by the watchdog, whose
// renewals would set the lease back to theirs.
var ErrWatched = errors.New("the watchdog keeps this lock's holds: only a lock with a fixed lease (WithLease) is extended")

// Extend sets the lease of the caller's hold (the owner carried by ctx, or
// the handle's current plain hold) to d from now, if it is still held; it
// never acquires (see hold.Table.Extend).
func (l *Lock) Extend(ctx context.Context, d time.Duration) error {
	if err := CheckExtend(ctx, l.Name, l.Client, l.Cfg, d); err != nil {
		return l.errorf("extend", err)
	}
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = l.Holds.CurrentPlain(hold.Any); !ok {
			return l.errorf("extend", lockerr.ErrNotHeld)
		}
	}
	// An extension takes a grant not taken yet, as the take would.
	ks := []string{l.Name, keys.LockOf(l.Name).Grant}
	err := l.Holds.Extend(ctx, l.Cfg.Sender(l.Client), Take, ks, id, d)
	if err != nil {
		return l.errorf("extend", err)
	}
	return nil
}

// CheckExtend returns why a lock named name, configured by cfg, may not be
// extended to d, if it may not: the checks every lock's Extend makes
// before any I/O.
func CheckExtend(ctx context.Context, name string, c redis.UniversalClient, cfg *lockopt.Common, d time.Duration) error {
	if err := rt.Usable(ctx, name, c); err != nil {
		return err
	}
	if err := lockopt.CheckLease(d); err != nil {
		return err
	}
	if cfg.Fixed == 0 {
		return ErrWatched
	}
	return nil
}

// Deadline returns the end of the known validity of the handle's current
// hold (see hold.Keeping.Until), or the zero time if it holds nothing.
func (l *Lock) Deadline() time.Time { return l.Holds.Until(hold.Any) }
