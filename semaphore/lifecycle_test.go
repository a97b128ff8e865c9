package semaphore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// keysOf returns the keys on the server that belong to the semaphore
// name, but for latchkey's request records, which live their own short
// lives (latchkey_once:{name}:<id>, see scripts/fragment/once.lua).
func keysOf(t *testing.T, raw *redis.Client, name string) []string {
	ks, err := raw.Keys(context.Background(), "*"+name+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ks, func(k string) bool { return strings.HasPrefix(k, "latchkey_once:") })
}

// Delete wakes every latchkey waiter blocked in Acquire, in any client,
// with ErrDeleted, long before a waiter's backstop would look again (the
// letter, not a poll); it wakes a Redisson waiter too, and leaves no key
// of the semaphore on the server.
func TestSemaphore_Delete_wakesWaiters(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	if ok, err := semaphore.New(client(t, s), name).TrySetPermits(ctx, 0); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	const waiters = 4
	errs := make(chan error, waiters)
	for i := range waiters {
		sem := semaphore.New(client(t, s), name)
		go func() { errs <- sem.Acquire(ctx, int64(1+i%2)) }()
	}
	waitQueue(t, raw, name, waiters)

	var tries atomic.Int64
	java := make(chan error, 1)
	go func() {
		java <- redissonWaiter(ctx, raw, name, &tries)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for tries.Load() < 2 { // it tried, subscribed, and tried again
		if time.Now().After(deadline) {
			t.Fatal("the Redisson waiter never waited")
		}
		time.Sleep(time.Millisecond)
	}

	deleted := time.Now()
	if ok, err := semaphore.New(client(t, s), name).Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	for range waiters {
		select {
		case err := <-errs:
			if !errors.Is(err, latchkey.ErrDeleted) {
				t.Errorf("Acquire = %v, want an error matching ErrDeleted", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("a waiter was not woken by Delete within 2s")
		}
	}
	t.Logf("every waiter failed within %v of the delete", time.Since(deleted))
	deadline = time.Now().Add(2 * time.Second)
	for tries.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the Redisson waiter was not woken by Delete")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-java
	if ks := keysOf(t, raw, name); len(ks) != 0 {
		t.Errorf("keys left after Delete: %q", ks)
	}
	if ok, err := semaphore.New(client(t, s), name).Delete(context.Background()); ok || err != nil {
		t.Errorf("Delete of a deleted semaphore = %v, %v; want false", ok, err)
	}
}

// redissonWaiter blocks as Redisson's acquire(1) does on the semaphore
// name, counting its tries, until ctx ends.
func redissonWaiter(ctx context.Context, c *redis.Client, name string, tries *atomic.Int64) error {
	return locktest.RedissonWait(ctx, c, "redisson_sc:{"+name+"}", false, positive, func() (bool, time.Duration, error) {
		tries.Add(1)
		n, err := redissonAcquire.Run(ctx, c, []string{name}, 1).Int()
		return n == 1, -1, err
	})
}

// Delete writes its letter to every waiter it takes out: those queued,
// and those granted permits they did not come for yet; then Redisson's
// channel wakes Redisson's waiters.
func TestSemaphore_Delete_letters(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	hubChannel := func(hub string) string { return "latchkey_semaphore__channel:{" + name + "}:" + hub }
	sub := s.Client(t).Subscribe(ctx, hubChannel("h1"), hubChannel("h2"), "redisson_sc:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	far := float64(time.Now().Add(time.Minute).UnixMilli())
	raw.RPush(ctx, queueKey(name), "h1/2/queued")
	raw.ZAdd(ctx, "latchkey_semaphore_timeout:{"+name+"}", redis.Z{Score: far, Member: "h1/2/queued"})
	raw.ZAdd(ctx, grantKey(name), redis.Z{Score: far, Member: "h2/1/granted"})
	if ok, err := semaphore.New(client(t, s), name).Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	// Redisson's waiters hear a count that wakes them all.
	for _, want := range []string{"@queued deleted", "@granted deleted", "2147483647"} {
		expectMessage(t, sub, want)
	}
	if ks := keysOf(t, raw, name); len(ks) != 0 {
		t.Errorf("keys left after Delete: %q", ks)
	}
}

// Expire sets every key of the semaphore to expire, and they all do, on a
// real server; TTL reports it. A grant made after it lives no longer than
// the count, and SET (AddPermits) takes the TTL off both, as Redisson's.
func TestSemaphore_Expire(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	sem := semaphore.New(client(t, s), name)
	if d, err := sem.TTL(ctx); d != 0 || err != nil {
		t.Fatalf("TTL of a missing semaphore = %v, %v; want 0", d, err)
	}
	if ok, err := sem.Expire(ctx, time.Second); ok || err != nil {
		t.Fatalf("Expire of a missing semaphore = %v, %v; want false", ok, err)
	}
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if d, err := sem.TTL(ctx); d >= 0 || err != nil {
		t.Fatalf("TTL without one = %v, %v; want negative", d, err)
	}
	// Every key: a waiter queued, Hubs noted, a grant not taken yet.
	far := float64(time.Now().Add(time.Minute).UnixMilli())
	raw.ZAdd(ctx, grantKey(name), redis.Z{Score: far, Member: "h/1/granted"})
	waiter, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- semaphore.New(client(t, s), name).Acquire(waiter, 5) }()
	waitQueue(t, raw, name, 1)
	before := keysOf(t, raw, name)
	t.Logf("keys before Expire: %q", before)
	if len(before) < 5 {
		t.Fatalf("keys before Expire: %q, want the count, grants, queue, deadlines, listeners", before)
	}
	if ok, err := sem.Expire(ctx, 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("Expire = %v, %v; want true", ok, err)
	}
	for _, k := range before {
		if d := raw.PTTL(ctx, k).Val(); d <= 0 || d > 300*time.Millisecond {
			t.Errorf("PTTL of %s = %v after Expire(300ms)", k, d)
		}
	}
	if d, err := sem.TTL(ctx); d <= 0 || d > 300*time.Millisecond || err != nil {
		t.Errorf("TTL = %v, %v; want up to 300ms", d, err)
	}
	stop() // before the keys expire: its give-up notes its Hub
	<-done
	time.Sleep(400 * time.Millisecond)
	for _, k := range before {
		if n := raw.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s still exists after its TTL", k)
		}
	}
	if d, err := sem.TTL(ctx); d != 0 || err != nil {
		t.Errorf("TTL of an expired semaphore = %v, %v; want 0", d, err)
	}

	if ok, err := sem.TrySetPermitsTTL(ctx, 2, time.Minute); !ok || err != nil {
		t.Fatalf("TrySetPermitsTTL = %v, %v", ok, err)
	}
	raw.ZAdd(ctx, grantKey(name), redis.Z{Score: far, Member: "h/1/granted"})
	if err := sem.Release(ctx, 1); err != nil { // a release serves the queue
		t.Fatal(err)
	}
	if err := sem.AddPermits(ctx, 1); err != nil { // SET: the TTL goes
		t.Fatal(err)
	}
	for _, k := range []string{name, grantKey(name)} {
		if d := raw.PTTL(ctx, k).Val(); d != -1 && d != -time.Millisecond {
			t.Errorf("PTTL of %s = %v after AddPermits, want none", k, d)
		}
	}
}

// TrySetPermitsTTL is Redisson's trySetPermits(permits, ttl): SET NX PX on
// the count; the semaphore is gone when it expires, and can be set again.
// Leases too short, or none, are refused without I/O. On miniredis, whose
// clock the test moves.
func TestSemaphore_TrySetPermitsTTL(t *testing.T) {
	mr, c := mini(t)
	ctx := context.Background()
	name := semName(t)
	sem := semaphore.New(c, name)
	for _, d := range []time.Duration{0, -time.Second, 5 * time.Millisecond} {
		if ok, err := sem.TrySetPermitsTTL(ctx, 1, d); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("TrySetPermitsTTL(%v) = %v, %v; want ErrInvalidLease", d, ok, err)
		}
		if ok, err := sem.Expire(ctx, d); ok || !errors.Is(err, latchkey.ErrInvalidLease) {
			t.Errorf("Expire(%v) = %v, %v; want ErrInvalidLease", d, ok, err)
		}
	}
	if ok, err := sem.TrySetPermitsTTL(ctx, 3, 2*time.Second); !ok || err != nil {
		t.Fatalf("TrySetPermitsTTL = %v, %v", ok, err)
	}
	if d := mr.TTL(name); d != 2*time.Second {
		t.Errorf("TTL on the server = %v, want 2s", d)
	}
	if ok, err := sem.TrySetPermitsTTL(ctx, 5, time.Minute); ok || err != nil {
		t.Errorf("TrySetPermitsTTL on a set semaphore = %v, %v; want false", ok, err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if d, err := sem.TTL(ctx); d != 2*time.Second || err != nil {
		t.Errorf("TTL after an acquire = %v, %v; want 2s", d, err)
	}
	mr.FastForward(2 * time.Second)
	if n, err := sem.AvailablePermits(ctx); n != 0 || err != nil {
		t.Errorf("AvailablePermits after the TTL = %d, %v; want 0", n, err)
	}
	if ok, err := sem.TrySetPermitsTTL(ctx, 5, time.Minute); !ok || err != nil {
		t.Errorf("TrySetPermitsTTL after the TTL = %v, %v; want true", ok, err)
	}
}

// The same on a Redis Cluster: Delete wakes a waiter through its Hub's
// shard, and Expire and TTL reach the name's slot.
func TestSemaphore_Delete_cluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := "{" + semName(t) + "}"
	c := locktest.ClusterClient(t, cl)
	sem := semaphore.New(c, name)
	if ok, err := sem.TrySetPermitsTTL(ctx, 0, time.Minute); !ok || err != nil {
		t.Fatalf("TrySetPermitsTTL = %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() { done <- semaphore.New(locktest.ClusterClient(t, cl), name).Acquire(ctx, 1) }()
	deadline := time.Now().Add(10 * time.Second)
	for c.LLen(ctx, "latchkey_semaphore_queue:"+name).Val() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never queued")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if ok, err := sem.Expire(ctx, time.Hour); !ok || err != nil {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	if d, err := sem.TTL(ctx); d <= time.Minute || err != nil {
		t.Errorf("TTL = %v, %v; want about an hour", d, err)
	}
	if ok, err := sem.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, latchkey.ErrDeleted) {
			t.Errorf("Acquire = %v, want ErrDeleted", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the waiter was not woken by Delete")
	}
}
