package hold

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/redis/go-redis/v9"
)

// The queries of every hash lock. Each returns by ctx's deadline (see
// flight.Query).

// IsLocked reports whether the lock key exists.
func IsLocked(ctx context.Context, c redis.UniversalClient, key string) (bool, error) {
	n, err := flight.Query(ctx, c, func(ctx context.Context) (int64, error) { return c.Exists(ctx, key).Result() })
	return n == 1, err
}

// Count returns the hold count of field in the lock hash, 0 if absent.
func Count(ctx context.Context, c redis.UniversalClient, key, field string) (int, error) {
	n, err := flight.Query(ctx, c, func(ctx context.Context) (int, error) { return c.HGet(ctx, key, field).Int() })
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// TTL returns the lock key's time to live: 0 if it does not exist, -1 if it
// has no TTL.
func TTL(ctx context.Context, c redis.UniversalClient, key string) (time.Duration, error) {
	d, err := flight.Query(ctx, c, func(ctx context.Context) (time.Duration, error) { return c.PTTL(ctx, key).Result() })
	switch {
	case err != nil:
		return 0, err
	case d == -2*time.Nanosecond, d == -2*time.Millisecond:
		return 0, nil
	case d < 0:
		return -1, nil
	}
	return d, nil
}
