package mutex_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// redissonLock is a Redisson client's RLock, written from the protocol
// reference: its lock script, its unlock script, and its wait, which
// attempts again on every "0" on the lock's channel or when the holder's
// TTL runs out. Its owner id is not a latchkey one.
type redissonLock struct {
	c       redis.UniversalClient
	name    string
	owner   string
	sharded bool // on a cluster: SSUBSCRIBE and SPUBLISH, as Redisson on Redis 7
}

var (
	redissonTry = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`)
	redissonUnlock = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
return 1`)
)

func (r *redissonLock) channel() string { return "redisson_lock__channel:{" + r.name + "}" }

// lock blocks as Redisson's lock() does: try, subscribe, then try on
// every message or when the holder's TTL runs out.
func (r *redissonLock) lock(ctx context.Context) error {
	return locktest.RedissonWait(ctx, r.c, r.channel(), r.sharded, nil, func() (bool, time.Duration, error) {
		ttl, err := redissonTry.Run(ctx, r.c, []string{r.name}, 30000, r.owner).Int64()
		if err == redis.Nil {
			return true, 0, nil
		}
		return false, time.Duration(ttl) * time.Millisecond, err
	})
}

func (r *redissonLock) unlock(ctx context.Context) error {
	pub := "publish"
	if r.sharded {
		pub = "spublish"
	}
	return redissonUnlock.Run(ctx, r.c, []string{r.name, r.channel()}, 30000, r.owner, pub).Err()
}

// A Redisson waiter is not starved by latchkey's handoff. Three latchkey
// clients keep the lock busy (Lock, hold 20ms, Unlock, again); a Redisson
// lock() that arrives gets the lock within a few of their acquisitions,
// where a release that granted every time to the next latchkey waiter
// kept it out until they stopped. Nobody holds twice, and the latchkey
// clients go on after it.
func TestMutex_redissonWaiterServed(t *testing.T) {
	s := server(t)
	redissonServed(t, func() redis.UniversalClient { return client(t, s) }, false)
}

// The same on a Redis Cluster, where both sides use sharded pub/sub.
func TestMutex_redissonWaiterServed_cluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	redissonServed(t, func() redis.UniversalClient { return locktest.ClusterClient(t, cl) }, true)
}

func redissonServed(t *testing.T, newClient func() redis.UniversalClient, sharded bool) {
	name := lockName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	crowd := locktest.NewCrowd(1, 20*time.Millisecond)
	for range 3 {
		m := mutex.New(newClient(), name)
		crowd.Go(ctx, m.Lock, m.Unlock)
	}
	crowd.WaitAcquired(ctx, 10) // the latchkey clients queue behind each other
	java := &redissonLock{c: newClient(), name: name, owner: "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1", sharded: sharded}
	waited := crowd.Turns(ctx, t, 3, java.lock, java.unlock)
	// Once the Redisson client is gone, and the Hubs that listened for it
	// stopped lingering, latchkey's waiters keep no place for it.
	time.Sleep(2 * time.Second)
	queue := "latchkey_lock_queue:{" + name + "}"
	for range 100 {
		if slices.Contains(java.c.LRange(ctx, queue, 0, -1).Val(), "redisson") {
			t.Error("Redisson's waiters have a place in the queue with no Redisson client left")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	crowd.Stop(t)
	t.Logf("the Redisson waiter waited through %v latchkey acquisitions", waited)
	if slices.Max(waited) > 6 {
		t.Errorf("the Redisson waiter waited through %v latchkey acquisitions, want no more than were queued and a few", waited)
	}
}

// A waiter that gives up during its turn at a lock that a Redisson
// waiter took meanwhile leaves the Redisson client's hold alone: its turn
// is named where a grant would be, but the lock is not its own.
func TestMutex_turnGivenUpLeavesRedissonHold(t *testing.T) {
	s := server(t)
	name := lockName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	raw := s.Client(t)
	queue := "latchkey_lock_queue:{" + name + "}"
	a, b, d := mutex.New(client(t, s), name), mutex.New(client(t, s), name), mutex.New(client(t, s), name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	java := &redissonLock{c: s.Client(t), name: name, owner: "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1"}
	javaDone := make(chan error, 1)
	go func() { javaDone <- java.lock(ctx) }()
	for raw.PubSubNumSub(ctx, java.channel()).Val()[java.channel()] == 0 {
		time.Sleep(2 * time.Millisecond)
	}
	bDone := make(chan error, 1)
	go func() { bDone <- b.Lock(ctx) }()
	waitQueue(t, raw, queue, 1)
	if err := a.Unlock(ctx); err != nil { // grants b; Redisson's place follows it
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithCancel(ctx)
	dDone := make(chan error, 1)
	go func() { dDone <- d.Lock(dctx) }()
	waitQueue(t, raw, queue, 2)           // Redisson's place, then d
	if err := b.Unlock(ctx); err != nil { // Redisson's turn: d comes after
		t.Fatal(err)
	}
	if err := <-javaDone; err != nil {
		t.Fatalf("Redisson client: %v", err)
	}
	dcancel()
	if err := <-dDone; err == nil {
		t.Fatal("d took the lock the Redisson client holds")
	}
	for raw.LLen(ctx, queue).Val() > 0 && ctx.Err() == nil { // d's dequeue, in the background
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if !raw.HExists(ctx, name, java.owner).Val() {
		t.Fatal("the Redisson client's hold was deleted when d gave up its turn")
	}
	if err := java.unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
