package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
)

// A tap hears every message on its channel and takes no part in waking
// its waiters: a message that wakes one waiter still wakes it, a counter
// still counts, and a tap made first does not set how messages wake.
func TestHub_tap(t *testing.T) {
	s := redistest.SharedServer(t)
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	ctx := context.Background()

	ch := channelName(t, 0)
	tap, err := h.Tap(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	a, err := h.Subscribe(ctx, ch, notify.WakeOne)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := h.Subscribe(ctx, ch, notify.WakeOne)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	raw.Publish(ctx, ch, "0")
	if !woken(tap, wakeTimeout) {
		t.Fatal("the tap did not hear the message")
	}
	if !woken(a, wakeTimeout) {
		t.Fatal("the oldest waiter was not woken: the tap took its wake-up")
	}
	if woken(b, 100*time.Millisecond) {
		t.Fatal("a message that wakes one woke two waiters")
	}

	// A counter's channel, tapped: the counter counts every message.
	cc := channelName(t, 1)
	tap2, err := h.Tap(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	defer tap2.Close()
	counter, err := h.SubscribeWant(ctx, notify.Want{Name: cc, Policy: notify.WakeAll, Counter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer counter.Close()
	counter.Expect(2)
	raw.Publish(ctx, cc, "0")
	raw.Publish(ctx, cc, "0")
	if !woken(counter, wakeTimeout) {
		t.Fatal("the counter was not woken after two messages")
	}
	if n := counter.Count(); n != 2 {
		t.Fatalf("counted %d messages, want 2", n)
	}
	if !woken(tap2, wakeTimeout) {
		t.Fatal("the tap did not hear the messages")
	}

	// The channel stays subscribed while a tap listens on it alone.
	a.Close()
	b.Close()
	if n := raw.PubSubNumSub(ctx, ch).Val()[ch]; n != 1 {
		t.Fatalf("subscribers of the tapped channel = %d, want 1", n)
	}
}
