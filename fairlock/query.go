package fairlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/scripts"
)

// ForceUnlock deletes the lock whoever holds it and wakes the first waiter
// in the queue (Redisson's forceUnlock). It reports whether the lock was
// held. The queue is left as it is. The holder's hold is lost: its Done
// closes at its next renewal or lease end.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	n, err := scripts.Int(m.exec(ctx, m.cfg.HubFor(m.client), opForce, "", time.Now(), false, "").Cmd)
	if err != nil {
		return false, fmt.Errorf("fairlock: force unlock %s: %w", m.name, err)
	}
	return n == 1, nil
}

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	ok, err := hold.IsLocked(ctx, m.client, m.name)
	if err != nil {
		return false, fmt.Errorf("fairlock: %s: %w", m.name, err)
	}
	return ok, nil
}

// HoldCount returns how many holds the caller's owner has on the lock: the
// owner carried by ctx, or without one the handle's current plain hold (0
// or 1). It returns 0 if that owner does not hold it.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) {
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = m.holds.CurrentPlain(); !ok {
			return 0, nil
		}
	}
	n, err := hold.Count(ctx, m.client, m.name, id)
	if err != nil {
		return 0, fmt.Errorf("fairlock: %s: %w", m.name, err)
	}
	return n, nil
}

// TTL returns how long the lock will stay held unless renewed or unlocked:
// 0 if it is not held, and a negative duration if its key has no TTL (a
// holder outside latchkey removed it).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) {
	d, err := hold.TTL(ctx, m.client, m.name)
	if err != nil {
		return 0, fmt.Errorf("fairlock: %s: %w", m.name, err)
	}
	return d, nil
}
