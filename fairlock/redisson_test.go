package fairlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// javaLock plays a Redisson client's RFairLock (one RedissonClient, whose
// threads are numbered), speaking the protocol as redisson-protocol.md §3.3
// and §4.3 describe it: a waiter joins the queue by RPUSH with a deadline
// set once, the deadline of the waiter before it (or now + the lock's PTTL)
// + the wait timeout; every acquisition brings every deadline closer by the
// wait timeout; stale waiters are removed from the head only; a queued
// waiter never rescores itself, listens on its own channel and sleeps for
// the TTL its attempt returned. The scripts are written for these tests
// from that description.
type javaLock struct {
	c     *redis.Client
	name  string
	id    string        // the RedissonClient's UUID
	wait  time.Duration // its fairLockWaitTimeout
	lease time.Duration // its lockWatchdogTimeout; nothing renews it here
}

func newJavaLock(c *redis.Client, name string) *javaLock {
	return &javaLock{c: c, name: name, id: uuid.NewString(), wait: 5 * time.Minute, lease: 30 * time.Second}
}

func (j *javaLock) owner(thread int) string { return fmt.Sprintf("%s:%d", j.id, thread) }

func (j *javaLock) keys() []string { return []string{j.name, queueKey(j.name), timeoutKey(j.name)} }

// javaStalePurge is the first step of Redisson's fair-lock scripts: queue
// heads whose deadline has passed leave. KEYS[2] queue, KEYS[3] deadlines;
// ARGV[now] is the client's clock.
const javaStalePurge = `
local function purge(now)
  while true do
    local first = redis.call('lindex', KEYS[2], 0)
    if not first then break end
    local d = tonumber(redis.call('zscore', KEYS[3], first))
    if d == nil or d > now then break end
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  end
end
`

// javaAcquire is the queueing acquisition. KEYS: lock, queue, deadlines.
// ARGV: lease, owner, wait, now. It returns what Redisson's returns (nil
// when acquired, else a TTL to sleep for) as {1} or {0, ttl, joined}, where
// joined tells whether this attempt put the caller in the queue.
var javaAcquire = redis.NewScript(javaStalePurge + `
local lease, owner, wait, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
purge(now)
if redis.call('exists', KEYS[1]) == 0 then
  local first = redis.call('lindex', KEYS[2], 0)
  if not first or first == owner then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], owner)
    for _, w in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
      redis.call('zincrby', KEYS[3], -wait, w)
    end
    redis.call('hset', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], lease)
    return {1}
  end
end
if redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('hincrby', KEYS[1], owner, 1)
  redis.call('pexpire', KEYS[1], lease)
  return {1}
end
if redis.call('zscore', KEYS[3], owner) then
  return {0, math.max(0, redis.call('pttl', KEYS[1])), 0}
end
local tail = redis.call('lindex', KEYS[2], -1)
local ttl
if tail and redis.call('zscore', KEYS[3], tail) then
  ttl = tonumber(redis.call('zscore', KEYS[3], tail)) - now
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + wait + now, owner) == 1 then
  redis.call('rpush', KEYS[2], owner)
end
return {0, ttl, 1}
`)

// javaUnlock releases one hold. KEYS: lock, queue, deadlines, channel
// prefix. ARGV: lease, owner, now. Returns 1 released (or the lock was
// gone), 0 still held, -1 not the holder (Redisson's nil).
var javaUnlock = redis.NewScript(javaStalePurge + `
local lease, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
purge(now)
local function wakeFirst()
  local first = redis.call('lindex', KEYS[2], 0)
  if first then
    redis.call('publish', KEYS[4] .. ':' .. first, '0')
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  wakeFirst()
  return 1
end
if redis.call('hexists', KEYS[1], owner) == 0 then
  return -1
end
if redis.call('hincrby', KEYS[1], owner, -1) > 0 then
  redis.call('pexpire', KEYS[1], lease)
  return 0
end
redis.call('del', KEYS[1])
wakeFirst()
return 1
`)

// javaAcquireFailed leaves the queue after a timed-out tryLock. KEYS:
// queue, deadlines. ARGV: owner, wait. Those behind the caller come closer.
var javaAcquireFailed = redis.NewScript(`
local owner, wait = ARGV[1], tonumber(ARGV[2])
local q = redis.call('lrange', KEYS[1], 0, -1)
local behind = false
for _, w in ipairs(q) do
  if behind and redis.call('zscore', KEYS[2], w) then
    redis.call('zincrby', KEYS[2], -wait, w)
  end
  if w == owner then behind = true end
end
redis.call('lrem', KEYS[1], 0, owner)
redis.call('zrem', KEYS[2], owner)
return 0
`)

// attempt runs javaAcquire once for thread.
func (j *javaLock) attempt(ctx context.Context, thread int) (ok bool, ttl time.Duration, joined bool, err error) {
	now := time.Now().UnixMilli()
	vs, err := javaAcquire.Run(ctx, j.c, j.keys(), j.lease.Milliseconds(), j.owner(thread), j.wait.Milliseconds(), now).Int64Slice()
	if err != nil {
		return false, 0, false, err
	}
	if vs[0] == 1 {
		return true, 0, false, nil
	}
	return false, time.Duration(vs[1]) * time.Millisecond, vs[2] == 1, nil
}

// Lock is RLock.lock() on thread: attempt, subscribe to the thread's own
// channel, then attempt and sleep on the returned TTL until acquired. It
// reports how many times the thread joined the queue (more than once: it
// was dropped). When ctx ends it leaves the queue (acquireFailed).
func (j *javaLock) Lock(ctx context.Context, thread int) (joins int, err error) {
	ok, _, joined, err := j.attempt(ctx, thread)
	if joined {
		joins++
	}
	if ok || err != nil {
		return joins, err
	}
	var ttl time.Duration
	sub := j.c.Subscribe(ctx, channelOf(j.name, j.owner(thread)))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return joins, err
	}
	msgs := sub.Channel()
	for {
		ok, ttl, joined, err = j.attempt(ctx, thread)
		if joined {
			joins++
		}
		if ok || err != nil {
			return joins, err
		}
		// Redisson waits for a message alone when told a negative TTL, and
		// retries at once when told 0 (queued, lock free, not first); a
		// millisecond's pause spares the test machine.
		timer := time.NewTimer(max(ttl, time.Millisecond))
		if ttl < 0 {
			timer.Stop()
		}
		select {
		case <-msgs:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = javaAcquireFailed.Run(actx, j.c, []string{queueKey(j.name), timeoutKey(j.name)}, j.owner(thread), j.wait.Milliseconds()).Err()
			return joins, ctx.Err()
		}
		timer.Stop()
	}
}

// Unlock is RLock.unlock() on thread.
func (j *javaLock) Unlock(ctx context.Context, thread int) error {
	keys := append(j.keys(), "redisson_lock__channel:{"+j.name+"}")
	n, err := javaUnlock.Run(ctx, j.c, keys, j.lease.Milliseconds(), j.owner(thread), time.Now().UnixMilli()).Int64()
	if err != nil {
		return err
	}
	if n < 0 {
		return errors.New("redisson: attempt to unlock lock, not locked by current thread")
	}
	return nil
}
