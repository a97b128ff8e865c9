package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redissonLease is the lease a Redisson lock() takes without a leaseTime:
// lockWatchdogTimeout's default.
const redissonLease = 30000 // ms

// redissonTry is RLock's acquire, written from the protocol reference:
// take the lock hash if it is free or already this owner's, adding one to
// the owner's hold count and setting the lease; else return the holder's
// PTTL.
//
// KEYS[1] the lock; ARGV[1] the lease in ms; ARGV[2] the owner id.
// Returns nil when acquired, else the lock's PTTL in ms.
var redissonTry = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`)

// redissonRelease is RLock's unlock: take one off the owner's hold count;
// at zero delete the lock and publish "0" on its channel.
//
// KEYS[1] the lock, KEYS[2] its channel; ARGV[1] the lease in ms; ARGV[2]
// the owner id. Returns nil when the caller does not hold the lock, 0 when
// it still does (re-entered), 1 when released.
var redissonRelease = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], '0')
return 1`)

// redissonLock is an emulated Java client's RLock on the same lock name as
// latchkey's mutex: Redisson's hash layout, its scripts and its wait. A
// Redisson client is subscribed to the lock's channel only while it has a
// waiter, on a pub/sub connection it keeps: a Lock that must wait sends
// SUBSCRIBE on the handle's own pub/sub connection, opened at its first
// wait and kept, and UNSUBSCRIBE when it returns. It is not safe for
// concurrent use: one worker, one Java thread.
type redissonLock struct {
	c       redis.UniversalClient
	name    string
	channel string
	owner   string // <client uuid>:<thread id>
	sub     *redis.PubSub
	msgs    <-chan any // messages and subscription confirmations
}

func newRedissonLock(c redis.UniversalClient, name string) *redissonLock {
	return &redissonLock{c: c, name: name, channel: redissonPrefix("redisson_lock__channel", name),
		owner: newUUID() + ":1"}
}

// redissonPrefix is Redisson's prefixName: the prefix, then the name in
// braces unless it already has a hash tag of its own.
func redissonPrefix(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

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

// subscribe subscribes to the lock's channel and waits for the server to
// confirm it; what came before the confirmation (a former wait's messages)
// is spent.
func (r *redissonLock) subscribe(ctx context.Context) error {
	if r.sub == nil {
		r.sub = r.c.Subscribe(ctx)
		r.msgs = r.sub.ChannelWithSubscriptions()
	}
	if err := r.sub.Subscribe(ctx, r.channel); err != nil {
		return err
	}
	for {
		select {
		case m, open := <-r.msgs:
			if !open {
				return errors.New("redisson: pub/sub closed")
			}
			if s, ok := m.(*redis.Subscription); ok && s.Kind == "subscribe" && s.Channel == r.channel {
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
	if err := r.sub.Unsubscribe(ctx, r.channel); err != nil {
		r.close()
	}
}

func (r *redissonLock) close() {
	if r.sub != nil {
		_ = r.sub.Close()
		r.sub, r.msgs = nil, nil
	}
}

// try runs the acquire script once: whether it took the lock, else the
// holder's TTL.
func (r *redissonLock) try(ctx context.Context) (bool, time.Duration, error) {
	ttl, err := redissonTry.Run(ctx, r.c, []string{r.name}, redissonLease, r.owner).Int64()
	if errors.Is(err, redis.Nil) {
		return true, 0, nil
	}
	return false, time.Duration(ttl) * time.Millisecond, err
}

// Unlock releases the lock, failing as Redisson's IllegalMonitorStateException
// does when this client does not hold it.
func (r *redissonLock) Unlock(ctx context.Context) error {
	err := redissonRelease.Run(ctx, r.c, []string{r.name, r.channel}, redissonLease, r.owner).Err()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("redisson: unlock of a lock not held by %s", r.owner)
	}
	return err
}

// newUUID returns a random (version 4) UUID, as a Redisson client's id.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
