package wait_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/wait"
)

// A waiter whose channel the Hub already listens on (another waiter of the
// same lock, or a lingering subscription) joins before its first attempt,
// so that one attempt is all it makes before sleeping; a message still
// wakes it.
func TestUntil_joinsLiveChannelFirst(t *testing.T) {
	h, c := hubOn(t)
	channel := "wait-test:" + t.Name()
	ctx := context.Background()
	other, err := h.Subscribe(ctx, channel, notify.WakeAll)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	f := &fake{retry: longBusy}
	s := f.spec(h, channel)
	s.Wake.Policy = notify.WakeAll
	out := run(ctx, -1, s)
	deadline := time.Now().Add(giveUp)
	for h.Stats().Waiters < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := f.attempts(); n != 1 {
		t.Fatalf("%d attempts before sleeping on a live channel, want 1", n)
	}
	f.succeed.Store(true)
	c.Publish(ctx, channel, "0")
	if r := await(t, out); !r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v", r.ok, r.err)
	}
}

// Hint messages are counted, not each a wake-up: Heard runs once Expect's
// number of them has arrived, told how many, and leads to an attempt only
// when it says so; otherwise it may bring the next attempt forward.
func TestUntil_hint(t *testing.T) {
	h, c := hubOn(t)
	channel := "wait-test:" + t.Name()
	hint := channel + ":hint"
	ctx := context.Background()
	var heard, counted atomic.Int32
	f := &fake{retry: longBusy}
	s := f.spec(h, channel)
	s.Hint = hintFuncs{name: hint, expect: 2, heard: func(n int) (bool, time.Duration) {
		counted.Add(int32(n))
		switch heard.Add(1) {
		case 1:
			return false, 0 // ignored
		case 2:
			return false, 100 * time.Millisecond // attempt within 100ms
		default:
			return true, 0
		}
	}}
	out := run(ctx, -1, s)
	waitAttempts := func(n int) {
		t.Helper()
		deadline := time.Now().Add(giveUp)
		for f.attempts() < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if f.attempts() < n {
			t.Fatalf("%d attempts, want %d", f.attempts(), n)
		}
	}
	publish := func(n int) {
		for range n {
			c.Publish(ctx, hint, "0")
		}
	}
	waitAttempts(2) // first, and once subscribed
	publish(1)
	time.Sleep(100 * time.Millisecond)
	if heard.Load() != 0 {
		t.Fatal("Heard ran after 1 message, Expect said 2")
	}
	publish(1)
	time.Sleep(100 * time.Millisecond)
	if n := f.attempts(); n != 2 || heard.Load() != 1 || counted.Load() != 2 {
		t.Fatalf("after 2 messages: %d attempts, heard %d, counted %d; want 2, 1, 2", n, heard.Load(), counted.Load())
	}
	start := time.Now()
	publish(2)
	waitAttempts(3)
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Fatalf("the attempt brought forward to 100ms came after %v", d)
	}
	f.succeed.Store(true)
	publish(2)
	if r := await(t, out); !r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v", r.ok, r.err)
	}
}

// hintFuncs is a Hint on channel name, always active, that wakes at expect
// messages and asks heard.
type hintFuncs struct {
	name   string
	expect int
	heard  func(n int) (bool, time.Duration)
}

func (h hintFuncs) Channel() wait.Channel             { return wait.Channel{Name: h.name} }
func (hintFuncs) Active() bool                        { return true }
func (h hintFuncs) Expect() int                       { return h.expect }
func (h hintFuncs) Heard(n int) (bool, time.Duration) { return h.heard(n) }
