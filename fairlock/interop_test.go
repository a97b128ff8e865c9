package fairlock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
)

// These tests play a Redisson client by hand, with the commands its fair
// lock scripts run (redisson-protocol.md §3.3), to check that both sides
// read each other's keys and hear each other's messages.

// TestRedissonUnlockWakesLatchkeyWaiter: Redisson's unlock publishes "0" on
// the first waiter's own channel; a latchkey waiter listens there.
func TestRedissonUnlockWakesLatchkeyWaiter(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		c.HSet(ctx, name, "java-uuid:1", 1)
		c.PExpire(ctx, name, time.Minute)
		m := fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(longWait))
		done := goLock(func() error { return m.Lock(ctx) })
		waitQueued(t, c, name, 1)
		waitSubscribed(t, c, name, 0)
		head := c.LIndex(ctx, queueKey(name), 0).Val()
		c.Del(ctx, name)
		c.Publish(ctx, channelOf(name, head), "0")
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLatchkeyUnlockWakesRedissonWaiter: a Redisson waiter queued behind a
// latchkey holder hears "0" on its own channel at Unlock, and keeps its
// place against latchkey callers that arrive later.
func TestLatchkeyUnlockWakesRedissonWaiter(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		const java = "java-uuid:1"
		m := fairlock.New(newClient(), name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		addWaiter(t, c, name, java, deadline)
		sub := c.Subscribe(ctx, channelOf(name, java))
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case msg := <-sub.Channel():
			if msg.Payload != "0" {
				t.Fatalf("message %q, want 0", msg.Payload)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the Redisson waiter was not woken")
		}
		if ok, err := m.TryLock(ctx, 0); ok || err != nil {
			t.Fatalf("TryLock(0) ahead of a queued Redisson waiter = %v, %v", ok, err)
		}
		if ok, err := m.TryLock(ctx, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("TryLock ahead of a queued Redisson waiter = %v, %v", ok, err)
		}
		// Nobody shifted the Redisson waiter's deadline.
		if s, _ := c.ZScore(ctx, timeoutKey(name), java).Result(); int64(s) != deadline.UnixMilli() {
			t.Fatalf("Redisson waiter's deadline moved from %d to %d", deadline.UnixMilli(), int64(s))
		}
	})
}

// TestHeadWithoutDeadline: a queue entry with no deadline (left by a partial
// clean-up, which makes Redisson's scripts fail) is dropped, not waited on.
func TestHeadWithoutDeadline(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c, name := testCtx(t), newClient(), lockName()
		c.RPush(ctx, queueKey(name), "orphan-uuid:1")
		m := fairlock.New(c, name)
		if ok, err := m.TryLock(ctx, 0); !ok || err != nil {
			t.Fatalf("TryLock(0) = %v, %v", ok, err)
		}
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("queue %d, deadlines %d left", n, z)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHashTaggedName: a name with "{" keeps the caller's hash tag, as
// Redisson's prefixName does.
func TestHashTaggedName(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, c := testCtx(t), newClient()
		name := "job:{" + lockName() + "}"
		holder := fairlock.New(c, name)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		own := latchkey.WithOwner(ctx)
		done := goLock(func() error { return fairlock.New(c, name).Lock(own) })
		deadline := time.Now().Add(5 * time.Second)
		for c.LLen(ctx, "redisson_lock_queue:"+name).Val() != 1 {
			if time.Now().After(deadline) {
				t.Fatal("no waiter in redisson_lock_queue:" + name)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if c.ZCard(ctx, "redisson_lock_timeout:"+name).Val() != 1 {
			t.Fatal("no deadline in redisson_lock_timeout:" + name)
		}
		if _, err := holder.ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		if r := await(t, done, 5*time.Second); r.err != nil {
			t.Fatal(r.err)
		}
		if err := fairlock.New(c, name).Unlock(own); err != nil {
			t.Fatal(err)
		}
		if err := fairlock.New(c, name).Unlock(own); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatal(err)
		}
	})
}
