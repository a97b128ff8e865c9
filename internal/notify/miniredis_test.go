package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The Hub works on miniredis: SUBSCRIBE is confirmed, PUBLISH wakes,
// the last Close unsubscribes, and a restart of the server (which drops
// every connection) wakes every waiter after go-redis resubscribes.
//
// miniredis has no sharded pub/sub (SSUBSCRIBE, SPUBLISH, PUBSUB
// SHARDNUMSUB), no CLIENT LIST or CLIENT KILL, and no cluster; those are
// proven on real servers only.
func TestHub_miniredis(t *testing.T) {
	mr, c := redistest.Miniredis(t)
	h := newHub(t, c, notify.WithIdleTimeout(100*time.Millisecond))
	ctx := context.Background()
	ch := channelName(t, 0)

	if cmd, err := h.PublishCommand(ctx); err != nil || cmd != "PUBLISH" {
		t.Fatalf("PublishCommand = %q, %v; want PUBLISH", cmd, err)
	}
	a := subscribe(t, h, ch, notify.WakeOne)
	b := subscribe(t, h, ch, notify.WakeOne)
	if n := mr.PubSubNumSub(ch)[ch]; n != 1 {
		t.Fatalf("miniredis NUMSUB = %d right after Subscribe, want 1", n)
	}
	if n := mr.Publish(ch, "0"); n != 1 {
		t.Fatalf("PUBLISH reached %d subscribers, want 1", n)
	}
	if !woken(a, wakeTimeout) {
		t.Fatal("waiter not woken")
	}

	mr.Close()
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	for i, sub := range []*notify.Subscription{a, b} {
		if !woken(sub, 10*time.Second) {
			t.Fatalf("waiter %d not woken after miniredis restarted", i)
		}
	}
	eventually(t, wakeTimeout, func() bool { return mr.Publish(ch, "0") == 1 }, "not resubscribed after the restart")
	if !woken(a, wakeTimeout) {
		t.Fatal("waiter not woken by a publish after the restart")
	}

	a.Close()
	b.Close()
	eventually(t, wakeTimeout, func() bool { return mr.PubSubNumSub(ch)[ch] == 0 }, "still subscribed after the last Close")
	eventually(t, wakeTimeout, func() bool { return h.Stats().Connections == 0 }, "idle connection not closed")
}

// go-redis pings an idle subscriber connection every 3s; the replies must
// not look like a broken connection, whose reconnect would wake every
// waiter of the Hub every few seconds.
func TestHub_idleWaitersStayAsleep(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var c *redis.Client
			if backend == "miniredis" {
				_, c = redistest.Miniredis(t)
			} else {
				c = redistest.SharedServer(t).Client(t)
			}
			sub := subscribe(t, newHub(t, c), channelName(t, 0), notify.WakeAll)
			if woken(sub, 4*time.Second) {
				t.Fatal("an idle waiter was woken: the health check reconnected")
			}
		})
	}
}
