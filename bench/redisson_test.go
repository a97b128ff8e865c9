package main

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedissonLock runs the emulated RLock on one server (miniredis) and
// on a Redis Cluster (sharded pub/sub), where redis-server is installed.
func TestRedissonLock(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		m := miniredis.RunT(t)
		testRedissonLock(t, func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: m.Addr()}) })
	})
	t.Run("cluster", func(t *testing.T) {
		if !redistest.Available() {
			t.Skip("no redis-server")
		}
		c := redistest.StartCluster(t, 3)
		testRedissonLock(t, func() redis.UniversalClient { return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()}) })
	})
}

func testRedissonLock(t *testing.T, dial func() redis.UniversalClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := &Clients{List: []*Conn{{Client: dial()}, {Client: dial()}}}
	defer cs.Close()
	name := "bench:{redisson-test:redisson:1}"
	a, b := newRedissonLock(cs.List[0], name), newRedissonLock(cs.List[1], name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx); err == nil {
		t.Error("unlock by a non-holder did not fail")
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx) }()
	select {
	case err := <-got:
		t.Fatalf("second Lock returned while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken by the unlock")
	}
	// a's latch holds its answer until a's next command deletes it; the
	// unlock script answers a repeat of the request from it.
	if len(a.pending) != 1 {
		t.Fatalf("pending DELs %v, want a's latch", a.pending)
	}
	latch := a.pending[0]
	c := cs.List[0].Client
	if v, err := c.Get(ctx, latch).Result(); err != nil || v != "1" {
		t.Errorf("latch %s: %q, %v; want 1", latch, v, err)
	}
	if ttl := c.PTTL(ctx, latch).Val(); ttl <= 0 || ttl > redissonLatchTTL*time.Millisecond {
		t.Errorf("latch TTL %v", ttl)
	}
	n, err := redissonUnlock.Run(ctx, c, []string{name, a.channel, latch},
		redissonUnlockMessage, redissonLease, a.owner, a.publish, redissonLatchTTL).Int()
	if err != nil || n != 1 {
		t.Errorf("repeated unlock: %d, %v; want the latch's 1", n, err)
	}
	if ok, _, err := a.try(ctx); ok || err != nil {
		t.Errorf("try while b holds: %v, %v", ok, err)
	}
	if len(a.pending) != 0 || c.Exists(ctx, latch).Val() != 0 {
		t.Errorf("a's next command left its latch: pending %v", a.pending)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	last := b.pending[0]
	cs.Close()
	cs.List = nil
	check := dial()
	defer check.Close()
	if check.Exists(ctx, last).Val() != 0 {
		t.Error("closing the Conn did not send the pending DEL")
	}
}

func TestRequestID(t *testing.T) {
	id := requestID()
	if len(id) != 32 || id == requestID() {
		t.Errorf("request id %q", id)
	}
}
