package main

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// wakeRetryTTL is the yardstick's lease, the peers' 8s; it also bounds a
// waiter's sleep, since no holder's remaining TTL is longer.
const wakeRetryTTL = 8 * time.Second

// wakeRetryRelease deletes the lock if it still holds the caller's token
// and publishes on the lock's channel.
//
// KEYS[1] the lock; ARGV[1] the token; ARGV[2] the channel.
// Returns 1 when released, 0 when the lock was not the caller's.
var wakeRetryRelease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	redis.call("PUBLISH", ARGV[2], "0")
	return 1
end
return 0`)

func init() {
	register(&Impl{
		Name:  "wakeretry",
		Kind:  KindMutex,
		Rank:  5,
		Color: "#7f7f7f",
		About: "the yardstick, written in the bench: the minimal wake-and-retry pub/sub lock. SET NX PX 8s " +
			"to take; a Lua compare-and-delete plus PUBLISH to release; a waiter SUBSCRIBEs (once, kept " +
			"for the handle's life), then retries the SET on every message, sleeping at most the TTL. " +
			"Every release wakes every waiter of the lock. A woken waiter pays at least one message and " +
			"one SET: the floor that a grant carried by the release itself goes below.",
		New: func(c *Conn, name string) any {
			l := &wakeRetry{c: c.Client, key: name, channel: name + ":released"}
			c.OnClose(l.close)
			return l
		},
	})
}

// wakeRetry is one worker's handle on the yardstick lock. It is not safe
// for concurrent use, as the workers do not share handles.
type wakeRetry struct {
	c            redis.UniversalClient
	key, channel string
	token        string
	sub          *redis.PubSub
	msgs         <-chan *redis.Message
}

// Lock takes the lock, waiting for release messages while it is held.
func (l *wakeRetry) Lock(ctx context.Context) error {
	l.token = rand.Text()
	for {
		l.drain() // messages of releases before this try are spent
		ok, err := l.c.SetNX(ctx, l.key, l.token, wakeRetryTTL).Result()
		if err != nil || ok {
			return err
		}
		if l.sub == nil {
			if err := l.subscribe(ctx); err != nil {
				return err
			}
			continue // a release before the subscription published to nobody: try again
		}
		t := time.NewTimer(wakeRetryTTL)
		select {
		case <-l.msgs:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// Unlock releases the lock if this handle still holds it.
func (l *wakeRetry) Unlock(ctx context.Context) error {
	n, err := wakeRetryRelease.Run(ctx, l.c, []string{l.key}, l.token, l.channel).Int()
	if err == nil && n == 0 {
		err = errors.New("wakeretry: lock not held")
	}
	return err
}

// subscribe subscribes to the lock's channel and waits for the server to
// confirm it.
func (l *wakeRetry) subscribe(ctx context.Context) error {
	sub := l.c.Subscribe(ctx, l.channel)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return err
	}
	l.sub, l.msgs = sub, sub.Channel()
	return nil
}

func (l *wakeRetry) drain() {
	for {
		select {
		case <-l.msgs:
		default:
			return
		}
	}
}

func (l *wakeRetry) close() {
	if l.sub != nil {
		_ = l.sub.Close()
	}
}
