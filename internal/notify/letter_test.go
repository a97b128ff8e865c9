package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
)

// A letter wakes the waiter subscribed with its key alone, which reads its
// body; a letter for a key nobody waits with goes, empty, to one other
// waiter that takes letters, and never to a plain waiter; a plain message
// wakes by the channel's policy.
func TestHub_letters(t *testing.T) {
	s := redistest.SharedServer(t)
	c := s.Client(t)
	h := newHub(t, c)
	ctx := context.Background()
	name := channelName(t, 0)
	key := func(k string) *notify.Subscription {
		sub, err := h.SubscribeWant(ctx, notify.Want{Name: name, Policy: notify.WakeOne, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		return sub
	}
	a, b := key("a"), key("b")
	plain := subscribe(t, h, name, notify.WakeOne)

	before := time.Now()
	c.Publish(ctx, name, "@b hello world")
	if !woken(b, wakeTimeout) {
		t.Fatal("the letter did not wake its addressee")
	}
	if body, at, ok := b.Letter(); !ok || body != "hello world" || at.Before(before) {
		t.Fatalf("Letter = %q, %v, %v; want \"hello world\", received after the publish", body, at, ok)
	}
	if _, _, ok := b.Letter(); ok {
		t.Error("a letter was read twice")
	}
	if woken(a, quietPeriod) || woken(plain, 0) {
		t.Fatal("a letter woke another waiter")
	}

	c.Publish(ctx, name, "@gone 1 2")
	if !woken(a, wakeTimeout) && !woken(b, 0) {
		t.Fatal("a stray letter woke no waiter that takes letters")
	}
	if woken(plain, quietPeriod) {
		t.Fatal("a stray letter woke a plain waiter")
	}
	if body, _, ok := a.Letter(); ok && body != "" {
		t.Errorf("stray letter body = %q, want empty", body)
	}

	c.Publish(ctx, name, "0")
	if !woken(a, wakeTimeout) && !woken(b, 0) && !woken(plain, 0) {
		t.Fatal("a plain message woke nobody")
	}
}

// A counter wakes its waiter once as many messages as it expects have
// arrived since it last counted, and Count says how many did.
func TestHub_counter(t *testing.T) {
	s := redistest.SharedServer(t)
	c := s.Client(t)
	h := newHub(t, c)
	ctx := context.Background()
	name := channelName(t, 0)
	sub, err := h.SubscribeWant(ctx, notify.Want{Name: name, Policy: notify.WakeAll, Counter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sub.Expect(3)
	for range 2 {
		c.Publish(ctx, name, "0")
	}
	if woken(sub, quietPeriod) {
		t.Fatal("woken after 2 of 3 messages")
	}
	c.Publish(ctx, name, "0")
	if !woken(sub, wakeTimeout) {
		t.Fatal("not woken after 3 of 3 messages")
	}
	if n := sub.Count(); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
	c.Publish(ctx, name, "0")
	deadline := time.Now().Add(wakeTimeout)
	for sub.Count() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // counted without a wake-up: Expect is 3
	}
	sub.Expect(1)
	c.Publish(ctx, name, "0")
	if !woken(sub, wakeTimeout) {
		t.Fatal("not woken after 1 of 1 message")
	}
}
