package notify_test

import (
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
)

// After its last waiter leaves, a channel stays subscribed for the linger
// time: a waiter that comes back within it joins without any I/O, and
// after it the channel is unsubscribed.
func TestHub_linger(t *testing.T) {
	s := redistest.StartServer(t) // its own, so that command counts are ours
	c := s.Client(t)
	raw := s.Client(t)
	const linger = 400 * time.Millisecond
	h := newHub(t, c, notify.WithLinger(linger))
	name := channelName(t, "hot")

	if h.Subscribed(name) {
		t.Fatal("Subscribed before any Subscribe")
	}
	sub := subscribe(t, h, name, notify.WakeOne)
	if !h.Subscribed(name) {
		t.Fatal("not Subscribed with a confirmed waiter")
	}
	sub.Close()
	if !h.Subscribed(name) || numSub(t, raw, name) != 1 {
		t.Fatal("the channel did not linger after its last waiter left")
	}

	// A returning waiter takes the lingering subscription: the server sees
	// no second SUBSCRIBE, and a publish wakes it.
	before := commandCalls(t, raw, "subscribe")
	again := subscribe(t, h, name, notify.WakeOne)
	if n := commandCalls(t, raw, "subscribe") - before; n != 0 {
		t.Fatalf("rejoining a lingering channel sent %d SUBSCRIBEs", n)
	}
	raw.Publish(t.Context(), name, "0")
	select {
	case <-again.C():
	case <-time.After(wakeTimeout):
		t.Fatal("waiter on a lingering channel not woken")
	}
	again.Close()

	eventually(t, linger+wakeTimeout, func() bool { return numSub(t, raw, name) == 0 },
		"the channel is still subscribed after the linger time")
	if h.Subscribed(name) || h.Stats().Channels != 0 {
		t.Fatalf("Stats() = %+v after the linger time", h.Stats())
	}

	// WithLinger(0) unsubscribes at once.
	now := newHub(t, c, notify.WithLinger(0))
	subscribe(t, now, name+":0", notify.WakeOne).Close()
	if now.Subscribed(name+":0") || now.Stats().Channels != 0 {
		t.Fatalf("WithLinger(0): Stats() = %+v after the last waiter left", now.Stats())
	}
}
