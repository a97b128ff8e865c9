package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A waiter that needs two new channels, its letters' and a counted one,
// gets both with one SUBSCRIBE, and each works as its Subscribe would.
func TestHub_subscribeAllSharesOneCommand(t *testing.T) {
	s := redistest.StartServer(t) // its own: the test counts its SUBSCRIBEs
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	mail, count := channelName(t, "mail"), channelName(t, "count")

	before := subscribeCalls(t, raw, "subscribe")
	subs := make([]*notify.Subscription, 2)
	err := h.SubscribeAll(ctx, []notify.Want{
		{Name: mail, Policy: notify.WakeAll, Key: "k1"},
		{Name: count, Policy: notify.WakeAll, Counter: true}}, subs)
	if err != nil {
		t.Fatal(err)
	}
	defer subs[0].Close()
	defer subs[1].Close()
	if got := subscribeCalls(t, raw, "subscribe") - before; got != 1 {
		t.Errorf("two new channels took %d SUBSCRIBE commands, want 1", got)
	}
	if !h.Subscribed(mail) || !h.Subscribed(count) {
		t.Fatalf("subscribed: %s %v, %s %v", mail, h.Subscribed(mail), count, h.Subscribed(count))
	}

	if err := raw.Publish(ctx, mail, "@k1 hello").Err(); err != nil {
		t.Fatal(err)
	}
	if !woken(subs[0], wakeTimeout) {
		t.Fatal("the letter's waiter was not woken")
	}
	if body, _, ok := subs[0].Letter(); !ok || body != "hello" {
		t.Errorf("Letter() = %q, %v; want hello", body, ok)
	}
	subs[1].Expect(2)
	for range 2 {
		if err := raw.Publish(ctx, count, "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !woken(subs[1], wakeTimeout) {
		t.Fatal("the counter was not woken by its second message")
	}
	if n := subs[1].Count(); n != 2 {
		t.Errorf("Count() = %d, want 2", n)
	}
}

// A SubscribeAll that fails, here because the server cannot be reached,
// says why and leaves no waiter behind.
func TestHub_subscribeAllFails(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	h := newHub(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	subs := make([]*notify.Subscription, 2)
	err := h.SubscribeAll(ctx, []notify.Want{
		{Name: channelName(t, 1), Policy: notify.WakeAll},
		{Name: channelName(t, 2), Policy: notify.WakeAll, Counter: true}}, subs)
	if err == nil || ctx.Err() != nil || subs[0] != nil || subs[1] != nil {
		t.Fatalf("SubscribeAll to no server: %v, %v (ctx %v)", subs, err, ctx.Err())
	}
	if st := h.Stats(); st.Waiters != 0 {
		t.Errorf("%d waiters left after a failed SubscribeAll: %v", st.Waiters, err)
	}
}
