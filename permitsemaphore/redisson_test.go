package permitsemaphore_test

import (
	"context"
	"crypto/rand"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// redissonPermits is a Redisson client's RPermitExpirableSemaphore, written
// from the protocol reference: its acquire of one permanent permit (which
// first takes back the permits whose lease ended), its release by id, and
// its wait, which attempts again at each message of a positive count on
// the semaphore's channel.
type redissonPermits struct {
	c    *redis.Client
	name string
}

var (
	redissonAcquire = redis.NewScript(`
local expired = redis.call('zrangebyscore', KEYS[2], 0, ARGV[2])
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  redis.call('incrby', KEYS[1], #expired)
end
local v = tonumber(redis.call('get', KEYS[1]) or '0')
if v < 1 then
  return 0
end
redis.call('decr', KEYS[1])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
return 1`)
	redissonRelease = redis.NewScript(`
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('publish', KEYS[3], redis.call('incrby', KEYS[1], 1))
return 1`)
)

func (r *redissonPermits) keys() []string {
	return []string{r.name, "{" + r.name + "}:timeout", "redisson_sc:{" + r.name + "}"}
}

// acquire blocks as Redisson's acquire() does, and returns the permit's
// id: try, subscribe, then try at every message of a positive count.
func (r *redissonPermits) acquire(ctx context.Context) (string, error) {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	positive := func(payload string) bool {
		n, _ := strconv.Atoi(payload)
		return n > 0
	}
	err := locktest.RedissonWait(ctx, r.c, r.keys()[2], false, positive, func() (bool, time.Duration, error) {
		n, err := redissonAcquire.Run(ctx, r.c, r.keys(), id, time.Now().UnixMilli(), 922337203685477).Int()
		return n == 1, -1, err
	})
	return string(id), err
}

func (r *redissonPermits) release(ctx context.Context, id string) error {
	return redissonRelease.Run(ctx, r.c, r.keys(), id).Err()
}

// A Redisson waiter is not starved by latchkey's grants: as for the
// semaphore, with three latchkey clients keeping the one permit busy.
func TestPermits_redissonWaiterServed(t *testing.T) {
	s := server(t)
	name := semName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := permitsemaphore.New(client(t, s), name).SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	crowd := locktest.NewCrowd(1, 20*time.Millisecond)
	for range 3 {
		sem := permitsemaphore.New(client(t, s), name)
		var p *permitsemaphore.Permit
		crowd.Go(ctx, func(ctx context.Context) (err error) {
			p, err = sem.Acquire(ctx, permitsemaphore.Lease(time.Minute))
			return err
		}, func(ctx context.Context) error { return p.Release(ctx) })
	}
	crowd.WaitAcquired(ctx, 10) // the latchkey clients queue behind each other
	java := &redissonPermits{c: s.Client(t), name: name}
	var id string
	waited := crowd.Turns(ctx, t, 3, func(ctx context.Context) (err error) {
		id, err = java.acquire(ctx)
		return err
	}, func(ctx context.Context) error { return java.release(ctx, id) })
	crowd.Stop(t)
	t.Logf("the Redisson waiter waited through %v latchkey acquisitions", waited)
	if slices.Max(waited) > 6 {
		t.Errorf("the Redisson waiter waited through %v latchkey acquisitions, want no more than were queued and a few", waited)
	}
}
