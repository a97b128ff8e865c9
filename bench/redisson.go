package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// An emulated Redisson (Java) RLock client, written from the protocol
// reference (redisson-protocol.md §1 and §3.1): the "redisson" impl, an
// in-run yardstick, and the Java side of hotlock-mixed; with its token
// counter (§3.5), the RFencedLock client of the "redisson-fenced" impl,
// latchkey's yardstick in the instructions scenario. It sends what
// Redisson's client sends for lock() and unlock() with its defaults, on a
// single server or a cluster without replicas (so no WAIT, §1.4): EVALSHA
// of the acquire script; EVALSHA of the unlock script with its latch; a
// DEL of that latch once the unlock is answered.
const (
	// redissonLease is the lease a Redisson lock() takes without a
	// leaseTime: lockWatchdogTimeout's default. The watchdog renews it
	// every 10s; no hold in the bench lasts that long, so renewal is not
	// emulated.
	redissonLease = 30000 // ms
	// redissonLatchTTL is the unlock latch's TTL: (config timeout 3000ms +
	// retryDelay) × retryAttempts 4, with retryDelay's default
	// EqualJitterDelay(1s, 2s) drawing 1000-2000ms, so 16-20s (§1.5); the
	// bench uses the upper end, 20000ms.
	redissonLatchTTL = 20000 // ms
	// redissonUnlockMessage is what an unlock publishes (UNLOCK_MESSAGE).
	redissonUnlockMessage = "0"
)

// redissonTry is RLock's acquire: take the lock hash if it is free or
// already this owner's, adding one to the owner's hold count and setting
// the lease; else return the holder's PTTL.
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

// redissonFencedTry is RFencedLock's acquire (lockAndGetToken, §3.5): as
// redissonTry, and every acquisition, re-entry included, draws the next
// fencing token from a counter without a TTL.
//
// KEYS[1] the lock, KEYS[2] its token counter; ARGV[1] the lease in ms,
// ARGV[2] the owner id. Returns {-1, token} when acquired, else {the
// lock's PTTL in ms, -1}.
var redissonFencedTry = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, redis.call('incr', KEYS[2])}
end
return {redis.call('pttl', KEYS[1]), -1}`)

// redissonUnlock is RLock's unlock with its unlock latch: a latch that
// exists answers a repeated request as the first was answered; else take
// one off the owner's hold count, and at zero delete the lock and publish
// on its channel; either way record the answer in the latch.
//
// KEYS[1] the lock, KEYS[2] its channel, KEYS[3] this request's latch;
// ARGV[1] the message, ARGV[2] the lease in ms, ARGV[3] the owner id,
// ARGV[4] PUBLISH or SPUBLISH, ARGV[5] the latch's TTL in ms. Returns nil
// when the caller does not hold the lock, 0 when it still does
// (re-entered), 1 when released.
var redissonUnlock = redis.NewScript(`
local answered = redis.call('get', KEYS[3])
if answered then
  return tonumber(answered)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1`)

// redissonLock is an emulated Java client's RLock: Redisson's hash layout,
// its scripts and its wait (redisson_wait.go). It is not safe for
// concurrent use: one worker, one Java thread.
//
// Redisson's client DELs an unlock's latch once the unlock is answered,
// without waiting for that DEL. The emulation does not make the worker
// wait for it either: the DEL stays pending on the handle and goes in one
// pipeline in front of the handle's next command (the next Lock's
// EVALSHA), so it costs the server what the Java client's DEL costs, and
// the worker no round trip of its own; it counts as a command sent (RT).
// The DELs still pending when the run ends are sent when the handle's Conn
// closes, after the run's figures are read: at the end of a run each
// handle's last latch is alive, as the Java client's last DEL would still
// be on its way.
type redissonLock struct {
	c       redis.UniversalClient
	name    string
	channel string
	owner   string // <client uuid>:<thread id>
	publish string // PUBLISH, or SPUBLISH on a cluster
	token   string // RFencedLock's token counter; "" for an RLock
	pending []string
	sub     *redis.PubSub
	msgs    <-chan any // messages and subscription confirmations
}

// newRedissonLock returns a handle on the lock name through c's client;
// its pub/sub connection closes, and its pending DELs are sent, when c
// closes.
func newRedissonLock(c *Conn, name string) *redissonLock {
	r := &redissonLock{c: c.Client, name: name, channel: redissonPrefix("redisson_lock__channel", name),
		owner: newUUID() + ":1", publish: "PUBLISH"}
	// Redisson's shardedSubscriptionMode AUTO picks sharded pub/sub on a
	// cluster of Redis 7 or later; the bench's cluster is one.
	if _, ok := c.Client.(*redis.ClusterClient); ok {
		r.publish = "SPUBLISH"
	}
	c.OnClose(r.close)
	return r
}

// redissonPrefix is Redisson's prefixName: the prefix, then the name in
// braces unless it already has a hash tag of its own.
func redissonPrefix(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// newRedissonFencedLock returns a handle on the RFencedLock name: an RLock
// whose acquisitions draw a fencing token.
func newRedissonFencedLock(c *Conn, name string) *redissonLock {
	r := newRedissonLock(c, name)
	r.token = redissonPrefix("redisson_lock_token", name)
	return r
}

// try runs the acquire script once: whether it took the lock, else the
// holder's TTL.
func (r *redissonLock) try(ctx context.Context) (bool, time.Duration, error) {
	if r.token != "" {
		vs, err := r.eval(ctx, redissonFencedTry, []string{r.name, r.token}, redissonLease, r.owner).Int64Slice()
		if err != nil || len(vs) != 2 {
			return false, 0, cmp.Or(err, fmt.Errorf("redisson: fenced acquire replied %v", vs))
		}
		if vs[1] != -1 {
			return true, 0, nil
		}
		return false, time.Duration(vs[0]) * time.Millisecond, nil
	}
	ttl, err := r.eval(ctx, redissonTry, []string{r.name}, redissonLease, r.owner).Int64()
	if errors.Is(err, redis.Nil) {
		return true, 0, nil
	}
	return false, time.Duration(ttl) * time.Millisecond, err
}

// Unlock releases the lock, failing as Redisson's IllegalMonitorStateException
// does when this client does not hold it. Each unlock has a latch of its
// own, redisson_unlock_latch:{name}:<request id>, whose DEL is left
// pending.
func (r *redissonLock) Unlock(ctx context.Context) error {
	latch := redissonPrefix("redisson_unlock_latch", r.name) + ":" + requestID()
	err := r.eval(ctx, redissonUnlock, []string{r.name, r.channel, latch},
		redissonUnlockMessage, redissonLease, r.owner, r.publish, redissonLatchTTL).Err()
	r.pending = append(r.pending, latch)
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("redisson: unlock of a lock not held by %s", r.owner)
	}
	return err
}

// eval runs script by its SHA, as Redisson does (useScriptCache), loading
// it on NOSCRIPT; the pending DELs go in the same pipeline, in front. A
// DEL whose pipeline failed stays pending: it is sent again.
func (r *redissonLock) eval(ctx context.Context, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	if len(r.pending) == 0 {
		return s.Run(ctx, r.c, keys, args...)
	}
	ctx = eachARequest(ctx) // Redisson sends each DEL on its own
	pipe := r.c.Pipeline()
	dels := make([]*redis.IntCmd, len(r.pending))
	for i, k := range r.pending {
		dels[i] = pipe.Del(ctx, k)
	}
	cmd := s.EvalSha(ctx, pipe, keys, args...)
	_, _ = pipe.Exec(ctx)
	r.keepFailed(dels)
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return s.Eval(ctx, r.c, keys, args...)
	}
	return cmd
}

// keepFailed keeps pending the latches whose DEL failed.
func (r *redissonLock) keepFailed(dels []*redis.IntCmd) {
	kept := r.pending[:0]
	for i, d := range dels {
		if d.Err() != nil {
			kept = append(kept, r.pending[i])
		}
	}
	r.pending = kept
}

// close sends the pending DELs and closes the pub/sub connection.
func (r *redissonLock) close() {
	if len(r.pending) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		pipe := r.c.Pipeline()
		for _, k := range r.pending {
			pipe.Del(ctx, k)
		}
		_, _ = pipe.Exec(ctx)
		cancel()
		r.pending = nil
	}
	r.closeSub()
}

// requestID returns an unlock's request id: 16 random bytes in hex.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newUUID returns a random (version 4) UUID, as a Redisson client's id.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
