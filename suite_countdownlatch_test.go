package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// Count-down latch cases (Redisson's RedissonCountDownLatchTest, plus what
// latchkey does better: Delete releases waiters, lost messages are bounded).

// cdlFast bounds a release that must come from a message, not from the wait
// loop's backstop.
const cdlFast = wait.Backstop / 3

func init() {
	register("countdownlatch/count", func(t *testing.T, e *env) {
		ctx := context.Background()
		c := e.Client()
		l := countdownlatch.New(c, e.Name)
		if n, err := l.Count(ctx); n != 0 || err != nil {
			t.Fatalf("Count of a missing latch = %d, %v; want 0", n, err)
		}
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		if n := c.Exists(ctx, e.Name).Val(); n != 0 {
			t.Fatal("CountDown on a missing latch left a key behind")
		}
		if ok, err := l.TrySetCount(ctx, 0); ok || !errors.Is(err, latchkey.ErrInvalidCount) {
			t.Fatalf("TrySetCount(0) = %v, %v; want ErrInvalidCount", ok, err)
		}
		if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
			t.Fatalf("TrySetCount(2) = %v, %v; want true", ok, err)
		}
		if ok, err := countdownlatch.New(e.Client(), e.Name).TrySetCount(ctx, 5); ok || err != nil {
			t.Fatalf("TrySetCount on an existing latch = %v, %v; want false", ok, err)
		}
		for _, want := range []int64{1, 0, 0} {
			if err := l.CountDown(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := l.Count(ctx); n != want || err != nil {
				t.Fatalf("Count = %d, %v; want %d", n, err, want)
			}
		}
		if ok, err := l.TryWait(ctx, 0); !ok || err != nil {
			t.Fatalf("TryWait(0) at zero = %v, %v; want true", ok, err)
		}
		if ok, err := l.Delete(ctx); ok || err != nil {
			t.Fatalf("Delete of an open latch = %v, %v; want false", ok, err)
		}
	})

	register("countdownlatch/wait", func(t *testing.T, e *env) {
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), e.Name)
		if _, err := l.TrySetCount(ctx, 2); err != nil {
			t.Fatal(err)
		}
		dones := cdlWaiters(t, e, e.Name, 2, 3)
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		for _, d := range dones {
			cdlBlocked(t, d)
		}
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		for _, d := range dones {
			cdlReleased(t, d)
		}
	})

	register("countdownlatch/delete-releases-waiters", func(t *testing.T, e *env) {
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), e.Name)
		if _, err := l.TrySetCount(ctx, 3); err != nil {
			t.Fatal(err)
		}
		dones := cdlWaiters(t, e, e.Name, 2, 2)
		if ok, err := l.Delete(ctx); !ok || err != nil {
			t.Fatalf("Delete = %v, %v; want true", ok, err)
		}
		for _, d := range dones {
			cdlReleased(t, d)
		}
	})

	register("countdownlatch/try-wait", func(t *testing.T, e *env) {
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), e.Name)
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if ok, err := l.TryWait(ctx, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("TryWait(50ms) on count 1 = %v, %v; want false", ok, err)
		}
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := l.Wait(cctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait past the ctx deadline = %v; want DeadlineExceeded", err)
		}
		if n, err := l.Count(ctx); n != 1 || err != nil {
			t.Fatalf("Count after abandoned waits = %d, %v; want 1", n, err)
		}
	})

	// The wire: Redisson's key, channel and messages, heard by a raw
	// subscriber with the flavour of pub/sub the Hub uses (sharded on a
	// Redis 7 cluster).
	register("countdownlatch/wire", func(t *testing.T, e *env) {
		cdlWire(t, e, e.Name)
	})

	// A name with its own hash tag: the channel, always wrapped in braces,
	// hashes to another slot than the key. On a cluster the latch then
	// publishes from the client to the channel's shard.
	register("countdownlatch/braced-name", func(t *testing.T, e *env) {
		name := "cdl-{" + e.Name + "}"
		if keys.Slot(name) == keys.Slot(cdlChannel(name)) {
			t.Fatalf("%s: key and channel share a slot; pick another name", name)
		}
		cdlWire(t, e, name)
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), name)
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			t.Fatal(err)
		}
		dones := cdlWaiters(t, e, name, 2, 2)
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		for _, d := range dones {
			cdlReleased(t, d)
		}
	})
}

func cdlChannel(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

// cdlWire checks the key and the messages of a latch named name.
func cdlWire(t *testing.T, e *env, name string) {
	ctx := context.Background()
	c := e.Client()
	pub, err := rt.Publish(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ps *redis.PubSub
	if eyes := e.observer(); pub == "SPUBLISH" {
		ps = eyes.SSubscribe(ctx, cdlChannel(name))
	} else {
		ps = eyes.Subscribe(ctx, cdlChannel(name))
	}
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	next := func(want string) {
		t.Helper()
		m, err := ps.ReceiveTimeout(ctx, 2*time.Second)
		if msg, ok := m.(*redis.Message); err != nil || !ok || msg.Payload != want {
			t.Fatalf("message = %v, %v; want %q", m, err, want)
		}
	}
	l := countdownlatch.New(c, name)
	if _, err := l.TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	next("1") // NEW_COUNT
	if v := c.Get(ctx, name).Val(); v != "2" {
		t.Fatalf("GET %s = %q, want \"2\"", name, v)
	}
	for range 2 {
		if err := l.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	next("0") // ZERO_COUNT, once
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("key left at count zero")
	}
	if _, err := l.TrySetCount(ctx, 7); err != nil {
		t.Fatal(err)
	}
	next("1")
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	next("0") // ZERO_COUNT where Redisson sends NEW_COUNT: waiters open
}

// cdlWaiters starts perClient Waits on each of clients new clients and
// returns once all of them are blocked.
func cdlWaiters(t *testing.T, e *env, name string, clients, perClient int) []<-chan error {
	t.Helper()
	var dones []<-chan error
	var hubs []*pubsub.Hub
	var looks []*locktest.Commands
	for range clients {
		c := e.Client()
		hubs = append(hubs, pubsub.Shared(c))
		gets := &locktest.Commands{Only: "get"}
		c.AddHook(gets)
		looks = append(looks, gets)
		l := countdownlatch.New(c, name)
		for range perClient {
			done := make(chan error, 1)
			go func() { done <- l.Wait(context.Background()) }()
			dones = append(dones, done)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	if e.Polling {
		// No Hub registers them: each client's look at the count (GET),
		// which its waiters share, says they looked, and now poll.
		for _, gets := range looks {
			for gets.N() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("polling waiters never looked at the count")
				}
				time.Sleep(time.Millisecond)
			}
		}
		return dones
	}
	for _, h := range hubs {
		for h.Stats().Waiters != perClient {
			if time.Now().After(deadline) {
				t.Fatalf("waiters not blocked: %+v", h.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}
	return dones
}

func cdlReleased(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait = %v", err)
		}
	case <-time.After(cdlFast):
		t.Fatalf("Wait still blocked after %v", cdlFast)
	}
}

func cdlBlocked(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("Wait returned %v before the count reached zero", err)
	case <-time.After(20 * time.Millisecond):
	}
}
