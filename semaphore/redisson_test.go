package semaphore_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// redissonSemaphore is a Redisson client's RSemaphore, written from the
// protocol reference: its acquire and release scripts, and its wait, which
// subscribes to the semaphore's channel and attempts again at each message
// that says some permits are available.
type redissonSemaphore struct {
	c       redis.UniversalClient
	name    string
	sharded bool // on a cluster: SSUBSCRIBE and SPUBLISH, as Redisson on Redis 7
}

var (
	redissonAcquire = redis.NewScript(`
local v = tonumber(redis.call('get', KEYS[1]) or '0')
if v >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0`)
	redissonRelease = redis.NewScript(`
local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], v)`)
)

func (r *redissonSemaphore) channel() string { return "redisson_sc:{" + r.name + "}" }

// acquire blocks as Redisson's acquire(1) does: try, subscribe, then try
// at every message of a positive count.
func (r *redissonSemaphore) acquire(ctx context.Context) error {
	return locktest.RedissonWait(ctx, r.c, r.channel(), r.sharded, positive, func() (bool, time.Duration, error) {
		n, err := redissonAcquire.Run(ctx, r.c, []string{r.name}, 1).Int()
		return n == 1, -1, err
	})
}

// positive is Redisson's wake-up rule for a waiter of one permit: a count
// of at least one.
func positive(payload string) bool {
	n, _ := strconv.Atoi(payload)
	return n > 0
}

func (r *redissonSemaphore) release(ctx context.Context) error {
	pub := "publish"
	if r.sharded {
		pub = "spublish"
	}
	err := redissonRelease.Run(ctx, r.c, []string{r.name, r.channel()}, 1, pub).Err()
	if err == redis.Nil { // the script returns nothing
		return nil
	}
	return err
}

// A Redisson waiter is not starved by latchkey's grants. Three latchkey
// clients keep the one permit busy (Acquire, hold 20ms, Release, again); a
// Redisson acquire that arrives gets the permit within a few of their
// acquisitions, where releases that granted every time to the next
// latchkey waiter kept it out until they stopped. No more than one holds
// at once, and the latchkey clients go on after it.
func TestSemaphore_redissonWaiterServed(t *testing.T) {
	s := server(t)
	redissonServed(t, func() redis.UniversalClient { return client(t, s) }, false)
}

// The same on a Redis Cluster, where both sides use sharded pub/sub and a
// release counts the listeners with PUBSUB SHARDNUMSUB.
func TestSemaphore_redissonWaiterServed_cluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	redissonServed(t, func() redis.UniversalClient { return locktest.ClusterClient(t, cl) }, true)
}

func redissonServed(t *testing.T, newClient func() redis.UniversalClient, sharded bool) {
	name := semName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := semaphore.New(newClient(), name).SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	crowd := locktest.NewCrowd(1, 20*time.Millisecond)
	for range 3 {
		sem := semaphore.New(newClient(), name)
		crowd.Go(ctx, func(ctx context.Context) error { return sem.Acquire(ctx, 1) },
			func(ctx context.Context) error { return sem.Release(ctx, 1) })
	}
	crowd.WaitAcquired(ctx, 10) // the latchkey clients queue behind each other
	java := &redissonSemaphore{c: newClient(), name: name, sharded: sharded}
	waited := crowd.Turns(ctx, t, 3, java.acquire, java.release)
	crowd.Stop(t)
	t.Logf("the Redisson waiter waited through %v latchkey acquisitions", waited)
	if slices.Max(waited) > 6 {
		t.Errorf("the Redisson waiter waited through %v latchkey acquisitions, want no more than were queued and a few", waited)
	}
}
