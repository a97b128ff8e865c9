package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// An unreplicatedCase is one acquisition of T18 that no replica can
// acknowledge: it must fail with ErrNotReplicated and leave nothing.
type unreplicatedCase struct {
	name    string
	setup   func(ctx context.Context, admin *redis.Client, name string) error
	acquire func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error
	// left describes what the acquisition left on the master, as the
	// admin client (which does not wait for replicas) sees it.
	left func(ctx context.Context, admin *redis.Client, name string) string
}

var unreplicatedCases = []unreplicatedCase{
	{name: "mutex",
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			return mutex.New(c, name, mutex.WithReplicaSync(sync)).Lock(ctx)
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return lockedNote(mutex.New(admin, name, mutex.WithReplicaSync(0)).IsLocked(ctx))
		}},
	{name: "fairlock",
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			return fairlock.New(c, name, fairlock.WithReplicaSync(sync)).Lock(ctx)
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return lockedNote(fairlock.New(admin, name, fairlock.WithReplicaSync(0)).IsLocked(ctx))
		}},
	{name: "rwlock-write",
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			return rwlock.New(c, name, rwlock.WithReplicaSync(sync)).Lock(ctx)
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return lockedNote(rwlock.New(admin, name, rwlock.WithReplicaSync(0)).IsLocked(ctx))
		}},
	{name: "rwlock-read",
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			return rwlock.New(c, name, rwlock.WithReplicaSync(sync)).RLock(ctx)
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return lockedNote(rwlock.New(admin, name, rwlock.WithReplicaSync(0)).IsLocked(ctx))
		}},
	{name: "semaphore",
		setup: func(ctx context.Context, admin *redis.Client, name string) error {
			_, err := semaphore.New(admin, name, semaphore.WithReplicaSync(0)).TrySetPermits(ctx, 3)
			return err
		},
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			return semaphore.New(c, name, semaphore.WithReplicaSync(sync)).Acquire(ctx, 2)
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return permitsNote(semaphore.New(admin, name, semaphore.WithReplicaSync(0)).AvailablePermits(ctx))
		}},
	{name: "permitsemaphore",
		setup: func(ctx context.Context, admin *redis.Client, name string) error {
			_, err := permitsemaphore.New(admin, name, permitsemaphore.WithReplicaSync(0)).TrySetPermits(ctx, 3)
			return err
		},
		acquire: func(ctx context.Context, c *redis.Client, name string, sync time.Duration) error {
			_, err := permitsemaphore.New(c, name, permitsemaphore.WithReplicaSync(sync)).AcquireN(ctx, 2, permitsemaphore.Lease(time.Minute))
			return err
		},
		left: func(ctx context.Context, admin *redis.Client, name string) string {
			return permitsNote(permitsemaphore.New(admin, name, permitsemaphore.WithReplicaSync(0)).AvailablePermits(ctx))
		}},
}

func lockedNote(locked bool, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case locked:
		return "the lock is held"
	}
	return ""
}

func permitsNote(avail int64, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case avail != 3:
		return fmt.Sprintf("%d of 3 permits available", avail)
	}
	return ""
}
