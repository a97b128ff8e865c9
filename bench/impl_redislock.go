package main

import (
	"context"
	"errors"
	"time"

	"github.com/bsm/redislock"
)

// How the redislock impls are configured: its TTL matches redsync's default
// expiry, and a wait gets a deadline of its own, since without one redislock
// stops retrying after the TTL.
const (
	redislockTTL  = 8 * time.Second
	redislockWait = 30 * time.Second
)

func init() {
	register(&Impl{
		Name:  "redislock-linear",
		Color: "#9467bd",
		Kind:  KindMutex,
		Rank:  20,
		About: "bsm/redislock with LinearBackoff(5ms), the fast fixed poll a user picks for a short " +
			"critical section; TTL 8s, 30s wait deadline per Obtain.",
		New: func(c *Conn, name string) any {
			return &redislockMutex{c: redislock.New(c.Client), name: name, retry: func() redislock.RetryStrategy {
				return redislock.LinearBackoff(5 * time.Millisecond)
			}}
		},
	})
	register(&Impl{
		Name:  "redislock-exp",
		Color: "#c5b0d5",
		Kind:  KindMutex,
		Rank:  21,
		About: "bsm/redislock with ExponentialBackoff(16ms, 256ms): its docs recommend a 16ms minimum, " +
			"and 256ms caps it near redsync's longest delay; a fresh strategy per Obtain, " +
			"TTL 8s, 30s wait deadline per Obtain.",
		New: func(c *Conn, name string) any {
			return &redislockMutex{c: redislock.New(c.Client), name: name, retry: func() redislock.RetryStrategy {
				return redislock.ExponentialBackoff(16*time.Millisecond, 256*time.Millisecond)
			}}
		},
	})
}

// redislockMutex is one worker's lock. The retry strategy is made afresh for
// every Obtain because redislock's strategies count attempts.
type redislockMutex struct {
	c     *redislock.Client
	name  string
	retry func() redislock.RetryStrategy
	held  *redislock.Lock
}

func (r *redislockMutex) Lock(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, redislockWait)
	defer cancel()
	l, err := r.c.Obtain(wctx, r.name, redislockTTL, &redislock.Options{RetryStrategy: r.retry()})
	switch {
	case err == nil:
		r.held = l
		return nil
	case ctx.Err() == nil && (errors.Is(err, redislock.ErrNotObtained) || wctx.Err() != nil):
		return gaveUp(err)
	}
	return err
}

// TryLock tries once, as a poller's waiter does between its pauses.
func (r *redislockMutex) TryLock(ctx context.Context) (bool, error) {
	l, err := r.c.Obtain(ctx, r.name, redislockTTL, nil)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return false, nil
	case err != nil:
		return false, err
	}
	r.held = l
	return true, nil
}

func (r *redislockMutex) Unlock(ctx context.Context) error {
	l := r.held
	r.held = nil
	return l.Release(ctx)
}
