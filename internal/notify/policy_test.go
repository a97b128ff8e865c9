package notify_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// waiters subscribes n waiters to one channel, oldest first, through a Hub
// on miniredis (policies are the Hub's own logic), and returns them with a
// function that publishes to the channel.
func waiters(t *testing.T, n int, p notify.WakePolicy) ([]*notify.Subscription, func(msg string)) {
	t.Helper()
	_, c := redistest.Miniredis(t)
	h := newHub(t, c)
	ch := channelName(t, 0)
	subs := make([]*notify.Subscription, n)
	for i := range subs {
		subs[i] = subscribe(t, h, ch, p)
	}
	return subs, func(msg string) {
		t.Helper()
		if err := c.Publish(context.Background(), ch, msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// expectPending waits until exactly the waiters want hold a wake-up, and
// checks that no other is woken during quietPeriod after.
func expectPending(t *testing.T, subs []*notify.Subscription, want ...int) {
	t.Helper()
	deadline := time.Now().Add(wakeTimeout)
	for len(pending(subs)) < len(want) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(quietPeriod)
	if got := pending(subs); !slices.Equal(got, want) {
		t.Fatalf("waiters %v woken, want %v", got, want)
	}
}

// drain consumes every pending wake-up.
func drain(subs []*notify.Subscription) {
	for _, s := range subs {
		select {
		case <-s.C():
		default:
		}
	}
}

func TestWakeOne(t *testing.T) {
	subs, publish := waiters(t, 5, notify.WakeOne)
	// Each message wakes one waiter that has no wake-up pending, oldest
	// first.
	publish("0")
	expectPending(t, subs, 0)
	publish("0")
	publish("0")
	expectPending(t, subs, 0, 1, 2)
	drain(subs)
	publish("0")
	expectPending(t, subs, 0)
}

func TestWakeAll(t *testing.T) {
	subs, publish := waiters(t, 5, notify.WakeAll)
	publish("0")
	expectPending(t, subs, 0, 1, 2, 3, 4)
}

func TestWakeCount(t *testing.T) {
	subs, publish := waiters(t, 5, notify.WakeCount)
	publish("3")
	expectPending(t, subs, 0, 1, 2)
	drain(subs)
	publish("9")
	expectPending(t, subs, 0, 1, 2, 3, 4)
	drain(subs)
	for _, msg := range []string{"0", "-2", "x", ""} { // at least one
		publish(msg)
		expectPending(t, subs, 0)
		drain(subs)
	}
	for _, tc := range []struct {
		payload string
		want    int
	}{{"1", 1}, {"3", 3}, {"0", 1}, {"-1", 1}, {"abc", 1}, {"", 1}} {
		if got := notify.WakeCount(tc.payload); got != tc.want {
			t.Errorf("WakeCount(%q) = %d, want %d", tc.payload, got, tc.want)
		}
	}
}

func TestWakeAllOn(t *testing.T) {
	subs, publish := waiters(t, 5, notify.WakeAllOn("1"))
	publish("0")
	expectPending(t, subs, 0)
	drain(subs)
	publish("1")
	expectPending(t, subs, 0, 1, 2, 3, 4)
}

// A policy of one's own: the payload names how many to wake, "all" wakes
// every waiter.
func TestWakePolicy_custom(t *testing.T) {
	subs, publish := waiters(t, 4, func(payload string) int {
		if payload == "all" {
			return notify.All
		}
		return len(payload)
	})
	publish("xx")
	expectPending(t, subs, 0, 1)
	drain(subs)
	publish("all")
	expectPending(t, subs, 0, 1, 2, 3)
	drain(subs)
	publish("") // a policy may wake nobody
	expectPending(t, subs)
}

// A waiter that closes with a wake-up it did not consume passes it on, so
// that a release is not lost with it.
func TestSubscription_Close_passesWakeUpOn(t *testing.T) {
	subs, publish := waiters(t, 3, notify.WakeOne)
	publish("0")
	expectPending(t, subs, 0)
	subs[0].Close()
	expectPending(t, subs, 1)

	// A consumed wake-up is not passed on.
	if !woken(subs[1], wakeTimeout) {
		t.Fatal("wake-up vanished")
	}
	subs[1].Close()
	expectPending(t, subs)
}

// Wake-ups coalesce and dispatch never blocks: a waiter that never reads
// holds one pending wake-up however many messages arrive, and does not
// delay another channel's waiter.
func TestHub_coalescingNeverBlocks(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			var c *redis.Client
			if backend == "miniredis" {
				_, c = redistest.Miniredis(t)
			} else {
				c = redistest.SharedServer(t).Client(t)
			}
			h := newHub(t, c)
			ctx := context.Background()
			slow := subscribe(t, h, channelName(t, "slow"), notify.WakeAll)
			fast := subscribe(t, h, channelName(t, "fast"), notify.WakeAll)
			pipe := c.Pipeline()
			for range 1000 {
				pipe.Publish(ctx, channelName(t, "slow"), "0")
			}
			pipe.Publish(ctx, channelName(t, "fast"), "0")
			start := time.Now()
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			// The fast message comes after the 1000 others on the one
			// connection: it is delivered only if none of them blocked.
			if !woken(fast, wakeTimeout) {
				t.Fatal("1000 messages to a waiter that never reads stalled delivery to another channel")
			}
			t.Logf("the message after 1000 coalesced ones arrived in %v", time.Since(start))
			if n := len(slow.C()); n != 1 {
				t.Fatalf("the slow waiter holds %d wake-ups, want 1", n)
			}
			<-slow.C()
			if woken(slow, quietPeriod) {
				t.Error("the slow waiter got a second wake-up: 1000 messages must coalesce into one")
			}
		})
	}
}

// A waiter subscribed with a need counts as that many units of a counted
// wake-up: a release of k permits wakes, oldest first, the waiters k may
// satisfy, skipping those that need more than is left; when k fits no
// waiter, the oldest is woken anyway.
func TestHub_subscribeNeed(t *testing.T) {
	_, c := redistest.Miniredis(t)
	h := newHub(t, c)
	ctx := context.Background()
	ch := channelName(t, 0)
	var subs []*notify.Subscription
	for _, need := range []int{2, 2, 1, 0} { // 0 counts as 1
		sub, err := h.SubscribeWant(ctx, notify.Want{Name: ch, Policy: notify.WakeCount, Need: need})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		subs = append(subs, sub)
	}
	publish := func(msg string) {
		t.Helper()
		if err := c.Publish(ctx, ch, msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	publish("3") // 2 for the oldest, 1 left: the third
	expectPending(t, subs, 0, 2)
	drain(subs)
	publish("4")
	expectPending(t, subs, 0, 1)
	drain(subs)
	publish("1") // the third, the oldest that fits
	expectPending(t, subs, 2)
	drain(subs)

	// When no waiter fits, the oldest is woken anyway.
	subs[2].Close()
	subs[3].Close()
	publish("1")
	expectPending(t, subs, 0)

	// Closing with an unconsumed wake-up passes the units it needed on.
	subs[0].Close()
	expectPending(t, subs, 1)
}
