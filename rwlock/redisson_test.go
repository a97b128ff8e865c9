package rwlock_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// redissonWriter is a Redisson client's write lock, written from the
// protocol reference: its lock script, its unlock script, and its wait,
// which attempts again at every message on the lock's channel or when the
// holders' TTL runs out.
type redissonWriter struct {
	c     *redis.Client
	name  string
	owner string
}

var (
	redissonWriteTry = redis.NewScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`)
	redissonWriteUnlock = redis.NewScript(`
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], '1')
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
return 1`)
)

func (r *redissonWriter) channel() string { return "redisson_rwlock:{" + r.name + "}" }

func (r *redissonWriter) lock(ctx context.Context) error {
	return locktest.RedissonWait(ctx, r.c, r.channel(), false, nil, func() (bool, time.Duration, error) {
		ttl, err := redissonWriteTry.Run(ctx, r.c, []string{r.name}, 30000, r.owner+":write").Int64()
		if err == redis.Nil {
			return true, 0, nil
		}
		return false, time.Duration(ttl) * time.Millisecond, err
	})
}

func (r *redissonWriter) unlock(ctx context.Context) error {
	return redissonWriteUnlock.Run(ctx, r.c, []string{r.name, r.channel()}, r.owner+":write").Err()
}

// A Redisson writer is served among latchkey writers that keep the lock
// busy (Lock, hold 20ms, Unlock, again) as among Redisson writers: a write
// unlock grants nothing and wakes every waiter of either side, so the
// Java writer races latchkey's as Redisson writers race each other. It
// gets the lock within a few holds of the others either way; the log
// shows how many.
func TestRWMutex_redissonWriterServed(t *testing.T) {
	s := server(t)
	for _, crowd := range []string{"latchkey", "redisson"} {
		t.Run(crowd, func(t *testing.T) {
			name := lockName(t)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			others := locktest.NewCrowd(1, 20*time.Millisecond)
			for i := range 3 {
				if crowd == "latchkey" {
					rw := rwlock.New(client(t, s), name)
					others.Go(ctx, rw.Lock, rw.Unlock)
					continue
				}
				r := &redissonWriter{c: s.Client(t), name: name, owner: fmt.Sprintf("0b5c1e7a-3d2f-4c8e-9a6b-%012d:1", i)}
				others.Go(ctx, r.lock, r.unlock)
			}
			others.WaitAcquired(ctx, 10)
			java := &redissonWriter{c: s.Client(t), name: name, owner: "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1"}
			waited := others.Turns(ctx, t, 5, java.lock, java.unlock)
			others.Stop(t)
			t.Logf("among %s writers, the Redisson writer waited through %v holds", crowd, waited)
			// Among Redisson writers it is Redisson's race, logged to compare.
			if most := slices.Max(waited); crowd == "latchkey" && most > 40 {
				t.Errorf("the Redisson writer waited through up to %d holds, want a few", most)
			}
		})
	}
}

// redissonReader is a Redisson client's read lock, written from the
// protocol reference, for one hold at a time: its lock script (free or
// read mode: a read hold, with its timeout key), its unlock script, and
// the same wait as a writer's.
type redissonReader struct {
	c     *redis.Client
	name  string
	owner string
}

var (
	redissonReadTry = redis.NewScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode and mode ~= 'read' then
  return redis.call('pttl', KEYS[1])
end
redis.call('hset', KEYS[1], 'mode', 'read')
local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
return nil`)
	redissonReadUnlock = redis.NewScript(`
local n = redis.call('hincrby', KEYS[1], ARGV[1], -1)
redis.call('del', KEYS[3] .. ':' .. (n + 1))
if n > 0 then
  return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], '0')
end
return 1`)
)

func (r *redissonReader) timeouts() string { return "{" + r.name + "}:" + r.owner + ":rwlock_timeout" }

func (r *redissonReader) lock(ctx context.Context) error {
	return locktest.RedissonWait(ctx, r.c, "redisson_rwlock:{"+r.name+"}", false, nil, func() (bool, time.Duration, error) {
		ttl, err := redissonReadTry.Run(ctx, r.c, []string{r.name, r.timeouts()}, 30000, r.owner).Int64()
		if err == redis.Nil {
			return true, 0, nil
		}
		return false, time.Duration(ttl) * time.Millisecond, err
	})
}

func (r *redissonReader) unlock(ctx context.Context) error {
	return redissonReadUnlock.Run(ctx, r.c, []string{r.name, "redisson_rwlock:{" + r.name + "}", r.timeouts()}, r.owner).Err()
}

// A Redisson reader is served among latchkey writers that keep the lock
// busy, as a Redisson writer is: a write unlock wakes every waiter, and
// the reader races the writers for the free lock.
func TestRWMutex_redissonReaderServed(t *testing.T) {
	s := server(t)
	name := lockName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	writers := locktest.NewCrowd(1, 20*time.Millisecond)
	for range 3 {
		rw := rwlock.New(client(t, s), name)
		writers.Go(ctx, rw.Lock, rw.Unlock)
	}
	writers.WaitAcquired(ctx, 10)
	java := &redissonReader{c: s.Client(t), name: name, owner: "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1"}
	waited := writers.Turns(ctx, t, 5, java.lock, java.unlock)
	writers.Stop(t)
	t.Logf("the Redisson reader waited through %v latchkey writers' holds", waited)
	if most := slices.Max(waited); most > 40 {
		t.Errorf("the Redisson reader waited through up to %d holds, want a few", most)
	}
}
