package main

import (
	"context"
	"errors"
	"math"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
)

func init() {
	register(&Impl{
		Name:  "redsync",
		Color: "#d62728",
		Kind:  KindMutex,
		Rank:  10,
		About: "redsync v4, one pool, tries raised to MaxInt32 so a blocking Lock never gives up " +
			"(redsync has no blocking mode); otherwise its defaults: expiry 8s, retry delay uniform 50-250ms.",
		New: func(c *Conn, name string) any {
			return &redsyncMutex{m: redsync.New(goredis.NewPool(c.Client)).NewMutex(name, redsync.WithTries(math.MaxInt32))}
		},
	})
	register(&Impl{
		Name:  "redsync-default",
		Color: "#ff9896",
		Kind:  KindMutex,
		Rank:  11,
		About: "redsync v4 with every default: 32 tries, retry delay uniform 50-250ms (about 5s of " +
			"trying), expiry 8s. A Lock that runs out of tries counts as a give-up.",
		New: func(c *Conn, name string) any {
			return &redsyncMutex{m: redsync.New(goredis.NewPool(c.Client)).NewMutex(name)}
		},
	})
}

// redsyncMutex holds one *redsync.Mutex per worker: it is not safe for
// concurrent use, and each Lock generates a new value.
type redsyncMutex struct{ m *redsync.Mutex }

func (r *redsyncMutex) Lock(ctx context.Context) error {
	err := r.m.LockContext(ctx)
	var taken *redsync.ErrTaken
	if err != nil && ctx.Err() == nil && (errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken)) {
		return gaveUp(err)
	}
	return err
}

func (r *redsyncMutex) Unlock(ctx context.Context) error {
	_, err := r.m.UnlockContext(ctx)
	return err
}
