package notify_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A Hub whose connection is being dialled to a server that does not answer
// (stopped with SIGSTOP) holds up no caller past its ctx: a Subscribe
// returns by its deadline, with an error matching it, and so does one to
// another channel, which waits behind the first one's write; the Hub's
// other methods do not wait for that write at all. The client has
// go-redis's default timeouts (a read lasts up to 3s).
func TestHub_stalledServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test servers cannot be paused on windows")
	}
	s := redistest.StartServer(t)
	h := newHub(t, s.Client(t, func(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = 0, 0 }))
	s.Pause(2 * time.Second)
	const d, late = 300 * time.Millisecond, 750 * time.Millisecond
	type outcome struct {
		took time.Duration
		err  error
	}
	out := make(chan outcome, 2)
	for i := range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			_, err := h.Subscribe(ctx, channelName(t, i), notify.WakeAll)
			out <- outcome{time.Since(start), err}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	_ = h.Subscribed(channelName(t, 0))
	_ = h.Stats()
	if lock := time.Since(start); lock > d {
		t.Errorf("Subscribed and Stats took %v while a SUBSCRIBE waited for the server", lock)
	}
	for range 2 {
		o := <-out
		if o.took > d+late {
			t.Errorf("a Subscribe returned %v after the start, %v past its deadline", o.took, o.took-d)
		}
		if !errors.Is(o.err, context.DeadlineExceeded) {
			t.Errorf("a Subscribe's error = %v, want one matching context.DeadlineExceeded", o.err)
		}
	}
}

// A Hub's first use on a cluster looks at the cluster (sharded pub/sub or
// not, the channel's master) with reads that go-redis bounds by no ctx
// deadline: with every node stalled, a Subscribe still returns by its
// deadline, and so does a second one, which waits for the first one's
// look. Once the nodes answer again, a Subscribe succeeds.
func TestHub_stalledCluster(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test servers cannot be paused on windows")
	}
	cl := redistest.StartCluster(t, 3)
	c := cl.Client(t, func(o *redis.ClusterOptions) { o.ReadTimeout, o.WriteTimeout = 0, 0 })
	if err := c.Ping(context.Background()).Err(); err != nil { // the slot map is loaded
		t.Fatal(err)
	}
	h := newHub(t, c)
	const stall = 2 * time.Second
	for _, n := range cl.Nodes() {
		n.Pause(stall)
	}
	const d, late = 300 * time.Millisecond, 750 * time.Millisecond
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		start := time.Now()
		_, err := h.Subscribe(ctx, channelName(t, i), notify.WakeAll)
		took := time.Since(start)
		cancel()
		if took > d+late {
			t.Errorf("Subscribe %d returned %v after the start, %v past its deadline", i, took, took-d)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Subscribe %d: error = %v, want one matching context.DeadlineExceeded", i, err)
		}
	}
	time.Sleep(stall)
	subscribe(t, h, channelName(t, "after"), notify.WakeAll)
}
