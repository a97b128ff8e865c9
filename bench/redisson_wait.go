package main

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redisson's wait, emulated: a Redisson client is subscribed to the lock's
// channel only while it has a waiter, on a pub/sub connection it keeps. A
// Lock that must wait sends SUBSCRIBE (SSUBSCRIBE on a cluster) on the
// handle's own pub/sub connection, opened at its first wait and kept, and
// UNSUBSCRIBE when it returns.

// Lock blocks as Redisson's lock() does: try; subscribe; then try again
// on every message on the channel, or when the holder's TTL runs out.
func (r *redissonLock) Lock(ctx context.Context) error {
	ok, _, err := r.try(ctx)
	if ok || err != nil {
		return err
	}
	if err := r.subscribe(ctx); err != nil {
		return err
	}
	defer r.unsubscribe(context.WithoutCancel(ctx))
	for {
		ok, ttl, err := r.try(ctx) // a release before the subscription reached nobody
		if ok || err != nil {
			return err
		}
		if ttl < 0 { // no TTL: only a message ends the wait
			ttl = time.Hour
		}
		t := time.NewTimer(ttl)
		select {
		case _, open := <-r.msgs:
			if !open {
				t.Stop()
				return errors.New("redisson: pub/sub closed")
			}
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// sharded reports whether the handle uses sharded pub/sub.
func (r *redissonLock) sharded() bool { return r.publish == "SPUBLISH" }

// subscribe subscribes to the lock's channel and waits for the server to
// confirm it; what came before the confirmation (a former wait's messages)
// is spent.
func (r *redissonLock) subscribe(ctx context.Context) error {
	kind := "subscribe"
	if r.sharded() {
		kind = "ssubscribe"
	}
	if r.sub == nil {
		if r.sharded() {
			r.sub = r.c.SSubscribe(ctx)
		} else {
			r.sub = r.c.Subscribe(ctx)
		}
		r.msgs = r.sub.ChannelWithSubscriptions()
	}
	var err error
	if r.sharded() {
		err = r.sub.SSubscribe(ctx, r.channel)
	} else {
		err = r.sub.Subscribe(ctx, r.channel)
	}
	if err != nil {
		return err
	}
	for {
		select {
		case m, open := <-r.msgs:
			if !open {
				return errors.New("redisson: pub/sub closed")
			}
			if s, ok := m.(*redis.Subscription); ok && s.Kind == kind && s.Channel == r.channel {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unsubscribe ends the wait's subscription; the connection stays open for
// the next wait, unless it failed.
func (r *redissonLock) unsubscribe(ctx context.Context) {
	var err error
	if r.sharded() {
		err = r.sub.SUnsubscribe(ctx, r.channel)
	} else {
		err = r.sub.Unsubscribe(ctx, r.channel)
	}
	if err != nil {
		r.closeSub()
	}
}

func (r *redissonLock) closeSub() {
	if r.sub != nil {
		_ = r.sub.Close()
		r.sub, r.msgs = nil, nil
	}
}
