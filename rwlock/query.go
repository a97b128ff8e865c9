package rwlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// IsLocked reports whether anyone holds the lock, for reading or writing.
func (rw *RWMutex) IsLocked(ctx context.Context) (bool, error) {
	n, err := rw.client.Exists(ctx, rw.name).Result()
	if err != nil {
		return false, fmt.Errorf("rwlock: %s: %w", rw.name, err)
	}
	return n == 1, nil
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
	var get *redis.StringCmd
	var n *redis.IntCmd
	_, err = rw.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, rw.name, "mode")
		n = p.HLen(ctx, rw.name)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", 0, fmt.Errorf("rwlock: %s: %w", rw.name, err)
	}
	return get.Val(), n.Val(), nil
}
