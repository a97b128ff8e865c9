package main

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// floorTake takes the lock, or queues the caller behind it.
//
// KEYS[1] the lock, KEYS[2] the queue; ARGV[1] the caller's token.
// Returns 1 when taken, 0 when queued.
var floorTake = redis.NewScript(`
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", "8000") then
	return 1
end
redis.call("RPUSH", KEYS[2], ARGV[1])
return 0`)

// floorRelease hands the lock to the first in the queue, with a letter on
// that waiter's channel, or frees it.
//
// KEYS[1] the lock, KEYS[2] the queue; ARGV[1] the caller's token.
// Returns 1 when released, 0 when the lock was not the caller's.
var floorRelease = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local head = redis.call("LPOP", KEYS[2])
if head then
	redis.call("SET", KEYS[1], head, "PX", "8000")
	redis.call("PUBLISH", KEYS[1] .. ":to:" .. head, "1")
else
	redis.call("DEL", KEYS[1])
end
return 1`)

func init() {
	register(&Impl{
		Name:     "onetrip-floor",
		Kind:     KindMutex,
		Rank:     8,
		Color:    "#5d4037",
		Optional: true,
		About: "the floor of a one-trip handoff, written in the bench: the least lock whose release grants " +
			"the lock to the first waiter and tells it, in one script of four commands. No fencing token, " +
			"no Redisson interop, no resend safety, no lease renewal, and a waiter that dies in the queue " +
			"stalls the lock for 8s: what latchkey's guarantees cost a handoff is its distance from this. " +
			"Runs only in hotlock-floor.",
		New: func(c *Conn, name string) any {
			l := &floorLock{c: c.Client, key: name, queue: name + ":queue", token: rand.Text()}
			c.OnClose(l.close)
			return l
		},
		Prepare: func(ctx context.Context, c *Conn, name string, _ int) error {
			return c.Client.Del(ctx, name, name+":queue").Err()
		},
	})
	registerScenario(&Scenario{
		Name: "hotlock-floor", Rank: 13, Kinds: []Kind{KindMutex}, Workers: 8, Contended: true,
		Also: []string{"onetrip-floor"}, Optional: true,
		About: "hotlock (8 workers, hold 1ms, think 1ms) with onetrip-floor beside the mutexes: how far " +
			"each handoff is from the least one-trip lock's on this machine.",
		Run: Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
}

// floorLock is one worker's handle on the floor lock. It is not safe for
// concurrent use, as the workers do not share handles.
type floorLock struct {
	c                 redis.UniversalClient
	key, queue, token string
	sub               *redis.PubSub
	letters           <-chan *redis.Message
}

// Lock takes the lock, or queues and waits for the letter of its grant.
func (l *floorLock) Lock(ctx context.Context) error {
	if l.sub == nil {
		// Subscribed before the first queueing: no grant finds it deaf.
		sub := l.c.Subscribe(ctx, l.key+":to:"+l.token)
		if _, err := sub.Receive(ctx); err != nil {
			_ = sub.Close()
			return err
		}
		l.sub, l.letters = sub, sub.Channel()
	}
	n, err := floorTake.Run(ctx, l.c, []string{l.key, l.queue}, l.token).Int()
	if err != nil || n == 1 {
		return err
	}
	select {
	case <-l.letters:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlock releases the lock if this handle holds it.
func (l *floorLock) Unlock(ctx context.Context) error {
	n, err := floorRelease.Run(ctx, l.c, []string{l.key, l.queue}, l.token).Int()
	if err == nil && n == 0 {
		err = errors.New("onetrip-floor: lock not held")
	}
	return err
}

func (l *floorLock) close() {
	if l.sub != nil {
		_ = l.sub.Close()
	}
}
