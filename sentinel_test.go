package latchkey_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// Through redis.NewFailoverClient, a lock survives a Sentinel failover: the
// holder's Unlock reaches the new master and frees the lock there, and a
// waiter that was blocked before the failover gets the lock after it.
func TestSentinel_failover(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	const group = "locks"
	sentinel := redistest.StartSentinel(t, master, group)
	newClient := func() *redis.Client {
		c := redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: group, SentinelAddrs: []string{sentinel.Addr()}, DialTimeout: 2 * time.Second,
		})
		t.Cleanup(func() { _ = latchkey.Close(c); _ = c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	holderClient, waiterClient := newClient(), newClient()

	holder := mutex.New(holderClient, "job")
	if err := holder.Lock(ctx); err != nil { // synced to the replica (WAIT)
		t.Fatal(err)
	}
	waiter := mutex.New(waiterClient, "job")
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	waitSubscribed(t, ctx, master, "job")

	// The failover returns once the old master has synced as a replica of
	// the new one: until then the new master has no replica to acknowledge
	// a synced write, and such writes fail closed with ErrNotReplicated.
	if err := redistest.SentinelFailover(ctx, sentinel, group, master, replica); err != nil {
		t.Fatal(err)
	}
	// The clients learn of the new master from the sentinel's +switch-master;
	// until then a command may still reach the old one.
	waitServedBy(t, ctx, holderClient, replica)

	select {
	case <-holder.Done():
		t.Fatalf("hold reported lost across the failover: %v", holder.Err())
	default:
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Unlock after the failover: %v", err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter's Lock across the failover: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("waiter still blocked after the holder's Unlock on the new master")
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatalf("waiter's Unlock: %v", err)
	}
	if n := replica.Client(t).Exists(ctx, "job").Val(); n != 0 {
		t.Errorf("the lock's key is still on the new master after both Unlocks")
	}
}

// waitSubscribed waits until some client of s listens on a channel of the
// primitive called name: a waiter subscribes once its first attempt failed.
func waitSubscribed(t *testing.T, ctx context.Context, s *redistest.Server, name string) {
	t.Helper()
	c := s.Client(t)
	for len(c.PubSubChannels(ctx, "*{"+name+"}*").Val()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the waiter never subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitServedBy waits until c's commands reach s.
func waitServedBy(t *testing.T, ctx context.Context, c *redis.Client, s *redistest.Server) {
	t.Helper()
	want := "tcp_port:" + strconv.Itoa(s.Port()) + "\r\n"
	for {
		if info, err := c.Info(ctx, "server").Result(); err == nil && strings.Contains(info, want) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the client never reached the new master %s", s.Addr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A failover to a replica that never got the lock (here: the key deleted
// on the replica, which a lagging replica would simply lack) tells the
// holder within about a second of the failover (its watchdog's probe), not
// at its next renewal (10s with the default watchdog).
func TestSentinel_failoverForgetsHold(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	const group = "forget"
	sentinel := redistest.StartSentinel(t, master, group)
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: group, SentinelAddrs: []string{sentinel.Addr()}, DialTimeout: 2 * time.Second,
	})
	t.Cleanup(func() { _ = latchkey.Close(c); _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	holder := mutex.New(c, "forgotten")
	if err := holder.Lock(ctx); err != nil { // synced to the replica (WAIT)
		t.Fatal(err)
	}
	rc := replica.Client(t)
	rc.ConfigSet(ctx, "replica-read-only", "no")
	if err := rc.Del(ctx, "forgotten").Err(); err != nil {
		t.Fatal(err)
	}
	if err := redistest.SentinelFailover(ctx, sentinel, group, master, replica); err != nil {
		t.Fatal(err)
	}
	// The holder's client sends nothing of its own: its watchdog's probe
	// finds the new master.
	done := time.Now()
	select {
	case <-holder.Done():
		t.Logf("the holder was told %v after the failover was over", time.Since(done))
	case <-time.After(3 * time.Second):
		t.Fatal("the holder was not told within 3s of the failover")
	}
	if err := holder.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
}
