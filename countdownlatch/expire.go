package countdownlatch

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockopt"
)

// Expire makes the latch expire d from now, whatever its count, and
// reports whether it existed. A latch that expired no longer exists: its
// count is zero, so it opens. Nothing is published when a key expires, so
// waiters learn it with their next look at the count, within a few seconds
// (Redisson's awaiters, which only wait for a message, stay blocked; Delete
// releases them at once). TrySetCount sets a count without a TTL. A d
// below latchkey.MinLease, zero included, returns an error matching
// latchkey.ErrInvalidLease and changes nothing.
func (l *Latch) Expire(ctx context.Context, d time.Duration) (bool, error) {
	err := rt.Usable(ctx, l.name, l.client)
	if err == nil {
		err = lockopt.CheckLease(d)
	}
	var ok bool
	if err == nil {
		ok, err = flight.Query(ctx, l.client, func(ctx context.Context) (bool, error) { return l.client.PExpire(ctx, l.name, d).Result() })
	}
	if err != nil {
		return false, fmt.Errorf("countdownlatch: expire %s in %v: %w", l.name, d, err)
	}
	return ok, nil
}

// TTL returns how long the latch lives unless counted down to zero,
// deleted or given another TTL: 0 if it does not exist (its count is
// zero), and a negative duration if it does not expire.
func (l *Latch) TTL(ctx context.Context) (d time.Duration, err error) {
	if err = rt.Usable(ctx, l.name, l.client); err == nil {
		d, err = hold.TTL(ctx, l.client, l.name)
	}
	if err != nil {
		return 0, fmt.Errorf("countdownlatch: TTL of %s: %w", l.name, err)
	}
	return d, nil
}
