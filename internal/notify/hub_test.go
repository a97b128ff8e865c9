package notify_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"go.uber.org/goleak"
)

// 10,000 waiters on 1,000 channels share one subscriber connection, every
// publish wakes its channel's waiters, closing them unsubscribes every
// channel, and the idle connection then closes with all its goroutines.
func TestHub_manyWaitersOneConnection(t *testing.T) {
	const channels, perChannel, workers = 1000, 10, 50
	s := redistest.SharedServer(t)
	c, name := named(t, s)
	raw := s.Client(t)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil { // start the pool's goroutines now
		t.Fatal(err)
	}
	raw.Ping(ctx)
	base := goleak.IgnoreCurrent()
	h := newHub(t, c, notify.WithIdleTimeout(300*time.Millisecond))

	subs := make([][]*notify.Subscription, channels)
	for i := range subs {
		subs[i] = make([]*notify.Subscription, perChannel)
	}
	errs := make(chan error, channels*perChannel)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w; k < channels*perChannel; k += workers {
				i, j := k%channels, k/channels
				sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				sub, err := h.Subscribe(sctx, channelName(t, i), notify.WakeAll)
				cancel()
				if err != nil {
					errs <- err
					continue
				}
				subs[i][j] = sub
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Logf("%d Subscribes on %d channels from %d goroutines: %v", channels*perChannel, channels, workers, time.Since(start))

	if st := h.Stats(); st != (notify.Stats{Connections: 1, Channels: channels, Waiters: channels * perChannel}) {
		t.Errorf("Stats() = %+v, want 1 connection, %d channels, %d waiters", st, channels, channels*perChannel)
	}
	conns := pubsubConns(t, raw, name)
	if len(conns) != 1 {
		t.Fatalf("CLIENT LIST TYPE pubsub shows %d connections of the Hub's client, want 1:\n%v", len(conns), conns)
	}
	if n := field(conns[0], "sub"); n != fmt.Sprint(channels) {
		t.Errorf("the connection has sub=%s, want %d", n, channels)
	}

	// One PUBLISH per channel, pipelined: each reaches exactly one
	// subscriber (the shared connection) and wakes all its waiters.
	start = time.Now()
	pipe := raw.Pipeline()
	for i := range channels {
		pipe.Publish(ctx, channelName(t, i), "x")
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if n, _ := cmd.(interface{ Val() int64 }); n == nil || n.Val() != 1 {
			t.Fatalf("PUBLISH to channel %d reached %v subscribers, want 1", i, cmd)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := range subs {
		for j, sub := range subs[i] {
			if !woken(sub, max(time.Until(deadline), 0)) {
				t.Fatalf("waiter %d of channel %d not woken", j, i)
			}
		}
	}
	t.Logf("%d publishes woke %d waiters in %v", channels, channels*perChannel, time.Since(start))

	var closers sync.WaitGroup
	for w := range workers {
		closers.Go(func() {
			for i := w; i < channels; i += workers {
				for _, sub := range subs[i] {
					sub.Close()
				}
			}
		})
	}
	closers.Wait()
	if st := h.Stats(); st.Waiters != 0 {
		t.Errorf("after closing every waiter Stats() = %+v, want no waiter", st)
	}
	// The channels linger (WithLinger, 1s by default), then go.
	eventually(t, wakeTimeout, func() bool { return h.Stats().Channels == 0 }, "channels still subscribed after the linger time")
	eventually(t, wakeTimeout, func() bool {
		chs, err := raw.PubSubChannels(ctx, "pubsub-test:"+t.Name()+":*").Result()
		return err == nil && len(chs) == 0
	}, "PUBSUB CHANNELS still lists channels of the test")
	for _, i := range []int{0, channels / 2, channels - 1} {
		if n := numSub(t, raw, channelName(t, i)); n != 0 {
			t.Errorf("PUBSUB NUMSUB %s = %d, want 0", channelName(t, i), n)
		}
	}

	// The idle connection closes after WithIdleTimeout, taking its
	// goroutines (dispatcher, go-redis reader and health check) with it.
	eventually(t, wakeTimeout, func() bool { return h.Stats().Connections == 0 }, "the idle connection is still open")
	eventually(t, wakeTimeout, func() bool { return len(pubsubConns(t, raw, name)) == 0 }, "the server still lists the Hub's connection")
	goleak.VerifyNone(t, base)
}

// Subscribe returns only once the server has confirmed the subscription:
// a PUBLISH right after it always reaches the waiter.
func TestHub_subscribedBeforePublishWakes(t *testing.T) {
	const n = 200
	s := redistest.SharedServer(t)
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	ctx := context.Background()
	var lat []time.Duration
	for i := range n {
		// Even rounds use a new channel; odd rounds resubscribe the channel
		// the previous round just unsubscribed (UNSUBSCRIBE, then SUBSCRIBE).
		ch := channelName(t, i-i%2)
		sctx, cancel := context.WithTimeout(ctx, wakeTimeout)
		sub, err := h.Subscribe(sctx, ch, notify.WakeOne)
		cancel()
		if err != nil {
			t.Fatalf("round %d: Subscribe: %v", i, err)
		}
		sent := time.Now()
		if got := raw.Publish(ctx, ch, "0").Val(); got != 1 {
			t.Fatalf("round %d: PUBLISH right after Subscribe reached %d subscribers, want 1", i, got)
		}
		if !woken(sub, wakeTimeout) {
			t.Fatalf("round %d: waiter not woken by a publish after Subscribe returned", i)
		}
		lat = append(lat, time.Since(sent))
		sub.Close()
	}
	t.Logf("%d rounds; median publish-to-wake latency %v", n, median(lat))
}

// After CLIENT KILL TYPE pubsub, go-redis reconnects and resubscribes; the
// Hub wakes every waiter (whatever its policy: messages were lost), and
// later publishes arrive again.
func TestHub_reconnectWakesAll(t *testing.T) {
	for _, mode := range []string{"client kill", "server restart"} {
		t.Run(mode, func(t *testing.T) {
			s := redistest.StartServer(t)
			c, name := named(t, s)
			raw := s.Client(t)
			ctx := context.Background()
			h := newHub(t, c)
			var subs []*notify.Subscription
			for i := range 4 {
				for range 3 {
					subs = append(subs, subscribe(t, h, channelName(t, i), notify.WakeOne))
				}
			}
			before := pubsubConns(t, raw, name)
			if len(before) != 1 {
				t.Fatalf("%d pubsub connections before, want 1", len(before))
			}

			start := time.Now()
			if mode == "client kill" {
				if err := raw.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				s.Restart(t)
			}
			for i, sub := range subs {
				if !woken(sub, 10*time.Second) {
					t.Fatalf("waiter %d not woken after the reconnect", i)
				}
			}
			t.Logf("every waiter woken %v after the %s", time.Since(start), mode)

			after := pubsubConns(t, raw, name)
			// A restarted server numbers its clients anew: compare the
			// client's port too.
			if len(after) != 1 || field(after[0], "id")+field(after[0], "addr") == field(before[0], "id")+field(before[0], "addr") {
				t.Fatalf("pubsub connections after the reconnect: %v, want one new one", after)
			}
			if got := raw.Publish(ctx, channelName(t, 2), "0").Val(); got != 1 {
				t.Fatalf("PUBLISH after the reconnect reached %d subscribers, want 1", got)
			}
			if !woken(subs[6], wakeTimeout) {
				t.Fatal("a publish after the reconnect did not wake the oldest waiter")
			}
			time.Sleep(quietPeriod)
			if p := pending(subs); len(p) != 0 {
				t.Errorf("waiters %v woken too, want only the oldest (WakeOne)", p)
			}
			if st := h.Stats(); st.Connections != 1 || st.Waiters != len(subs) {
				t.Errorf("Stats() = %+v", st)
			}
		})
	}
}

// Close wakes every waiter through Done, fails a Subscribe still waiting
// for its confirmation, and makes later calls return ErrClosed.
func TestHub_close(t *testing.T) {
	s := redistest.StartServer(t)
	c := s.Client(t)
	h := notify.New(c)
	a := subscribe(t, h, channelName(t, "a"), notify.WakeOne)
	b := subscribe(t, h, channelName(t, "b"), notify.WakeAll)

	// A Subscribe waiting for a frozen server's confirmation.
	s.Pause(2 * time.Second)
	blocked := make(chan error, 1)
	go func() {
		sub, err := h.Subscribe(context.Background(), channelName(t, "c"), notify.WakeOne)
		if sub != nil {
			sub.Close()
		}
		blocked <- err
	}()
	eventually(t, wakeTimeout, func() bool { return h.Stats().Waiters == 3 }, "the third Subscribe never registered")

	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, sub := range []*notify.Subscription{a, b} {
		select {
		case <-sub.Done():
		case <-time.After(wakeTimeout):
			t.Fatalf("waiter %d: Done not closed by Close", i)
		}
		sub.Close() // after the Hub's Close: a no-op
	}
	select {
	case err := <-blocked:
		if !errors.Is(err, lockerr.ErrClosed) {
			t.Errorf("Subscribe waiting when the Hub closed: %v, want ErrClosed", err)
		}
	case <-time.After(wakeTimeout):
		t.Fatal("Subscribe still waiting after Close")
	}

	_, err := h.Subscribe(context.Background(), channelName(t, "d"), notify.WakeOne)
	if !errors.Is(err, lockerr.ErrClosed) || !errors.Is(err, notify.ErrClosed) {
		t.Errorf("Subscribe after Close: %v, want ErrClosed", err)
	}
	if err := h.Close(); !errors.Is(err, lockerr.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if st := h.Stats(); st != (notify.Stats{}) {
		t.Errorf("Stats() after Close = %+v, want zero", st)
	}
}

func TestNew_nilClientPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	notify.New(nil)
}
