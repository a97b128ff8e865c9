package rwlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// IsLocked reports whether anyone holds the lock, for reading or writing.
func (rw *RWMutex) IsLocked(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return false, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	ok, err := hold.IsLocked(ctx, rw.client, rw.name)
	if err != nil {
		return false, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	return ok, nil
}

// TTL returns how long the lock will stay held unless renewed or unlocked
// (the longest lease of its holds): 0 if it is not held, and a negative
// duration if its key has no TTL (a holder outside latchkey removed it).
func (rw *RWMutex) TTL(ctx context.Context) (time.Duration, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	d, err := hold.TTL(ctx, rw.client, rw.name)
	if err != nil {
		return 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	return d, nil
}

// HoldCount returns how many read holds the caller's owner has on the
// lock: the owner carried by ctx, or without one the handle's newest plain
// read hold (0 or 1). It returns 0 if that owner holds none.
func (l *ReadLock) HoldCount(ctx context.Context) (int, error) { return l.rw.holdCount(ctx, read) }

// HoldCount returns how many write holds the caller's owner has on the
// lock: the owner carried by ctx, or without one the handle's plain write
// hold (0 or 1). It returns 0 if that owner holds none.
func (l *WriteLock) HoldCount(ctx context.Context) (int, error) { return l.rw.holdCount(ctx, write) }

func (rw *RWMutex) holdCount(ctx context.Context, s side) (int, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = rw.holds.CurrentPlain(int(s)); !ok {
			return 0, nil
		}
	}
	n, err := hold.Count(ctx, rw.client, rw.name, field(id, s))
	if err != nil {
		return 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	return n, nil
}

// IsLocked reports whether anyone holds the lock for reading, including a
// writer that also reads (Redisson's readLock().isLocked()).
func (l *ReadLock) IsLocked(ctx context.Context) (bool, error) {
	mode, fields, err := l.rw.state(ctx)
	return mode == "read" || mode == "write" && fields > 2, err
}

// IsLocked reports whether anyone holds the lock for writing.
func (l *WriteLock) IsLocked(ctx context.Context) (bool, error) {
	mode, _, err := l.rw.state(ctx)
	return mode == "write", err
}

// state returns the lock's mode ("" when free) and how many fields its hash
// has, read atomically.
func (rw *RWMutex) state(ctx context.Context) (mode string, fields int64, err error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return "", 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	type answer struct {
		mode   string
		fields int64
	}
	a, err := flight.Query(ctx, rw.client, func(ctx context.Context) (answer, error) {
		var get *redis.StringCmd
		var n *redis.IntCmd
		_, err := rw.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			get = p.HGet(ctx, rw.name, "mode")
			n = p.HLen(ctx, rw.name)
			return nil
		})
		return answer{get.Val(), n.Val()}, err
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", 0, fmt.Errorf("rwlock: query %s: %w", rw.name, err)
	}
	return a.mode, a.fields, nil
}
