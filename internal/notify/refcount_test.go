package notify_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The first waiter on a channel subscribes it, the last one to close
// unsubscribes it; waiters in between cost the server nothing.
func TestHub_refcount(t *testing.T) {
	s := redistest.SharedServer(t)
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	ch := channelName(t, 0)

	a := subscribe(t, h, ch, notify.WakeAll)
	if n := numSub(t, raw, ch); n != 1 {
		t.Fatalf("NUMSUB after the first Subscribe = %d, want 1", n)
	}
	b := subscribe(t, h, ch, notify.WakeAll)
	if n := numSub(t, raw, ch); n != 1 {
		t.Fatalf("NUMSUB after the second Subscribe = %d, want 1 (one connection)", n)
	}
	a.Close()
	a.Close() // idempotent
	time.Sleep(quietPeriod)
	if n := numSub(t, raw, ch); n != 1 {
		t.Fatalf("NUMSUB with one waiter left = %d, want 1", n)
	}
	if st := h.Stats(); st.Channels != 1 || st.Waiters != 1 {
		t.Errorf("Stats() = %+v, want 1 channel, 1 waiter", st)
	}
	b.Close()
	eventually(t, wakeTimeout, func() bool { return numSub(t, raw, ch) == 0 }, "the last Close did not unsubscribe")
	if st := h.Stats(); st.Channels != 0 || st.Waiters != 0 {
		t.Errorf("Stats() = %+v, want no channel", st)
	}

	// And the channel can be subscribed again.
	c := subscribe(t, h, ch, notify.WakeAll)
	if n := raw.Publish(context.Background(), ch, "x").Val(); n != 1 {
		t.Fatalf("PUBLISH after resubscribing reached %d subscribers, want 1", n)
	}
	if !woken(c, wakeTimeout) {
		t.Fatal("resubscribed waiter not woken")
	}
}

// Subscribe and Close racing on a few channels from many goroutines leave
// the server subscribed to exactly the channels that still have waiters,
// and the Hub's bookkeeping consistent with it.
func TestHub_refcountHammer(t *testing.T) {
	const workers, rounds, nchans = 12, 200, 4
	s := redistest.SharedServer(t)
	h := newHub(t, s.Client(t))
	raw := s.Client(t)
	ctx := context.Background()
	var chans []string
	for i := range nchans {
		chans = append(chans, channelName(t, i))
	}

	// hammer runs the workers; with keep, each even worker keeps its last
	// Subscription, on channel 0 or 1.
	hammer := func(keep bool) map[string][]*notify.Subscription {
		var (
			mu   sync.Mutex
			kept = map[string][]*notify.Subscription{}
			errs []error
			wg   sync.WaitGroup
		)
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), uint64(len(kept))))
				for i := range rounds {
					last := keep && w%2 == 0 && i == rounds-1
					ch := chans[r.IntN(nchans)]
					if last {
						ch = chans[w/2%2]
					}
					// Some Subscribes give up while their SUBSCRIBE is in
					// flight, as a waiter whose ctx ends would.
					sctx, cancel := context.WithTimeout(ctx, wakeTimeout)
					if !last && r.IntN(6) == 0 {
						cancel()
						sctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(300))*time.Microsecond)
					}
					sub, err := h.Subscribe(sctx, ch, notify.WakeAll)
					cancel()
					switch {
					case err != nil && sctx.Err() == nil:
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					case err != nil:
					case last:
						mu.Lock()
						kept[ch] = append(kept[ch], sub)
						mu.Unlock()
					default:
						time.Sleep(time.Duration(r.IntN(100)) * time.Microsecond)
						sub.Close()
					}
					time.Sleep(time.Duration(r.IntN(600)) * time.Microsecond)
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			t.Errorf("Subscribe: %v", err)
		}
		return kept
	}

	subscribes := commandCalls(t, raw, "subscribe")
	kept := hammer(true)
	waiters := 0
	for _, subs := range kept {
		waiters += len(subs)
	}
	if waiters != workers/2 || len(kept[chans[0]]) == 0 || len(kept[chans[1]]) == 0 {
		t.Fatalf("kept waiters %v, want %d on channels 0 and 1", kept, workers/2)
	}
	eventually(t, wakeTimeout, func() bool { return h.Stats() == notify.Stats{Connections: 1, Channels: 2, Waiters: waiters} },
		"with waiters left Stats() = %+v, want 1 connection, 2 channels, %d waiters", func() any { return h.Stats() }, waiters)
	for i, ch := range chans {
		want := int64(0)
		if i < 2 {
			want = 1
		}
		eventually(t, wakeTimeout, func() bool { return numSub(t, raw, ch) == want }, "channel %d: NUMSUB = %v, want %d", i, func() any { return numSub(t, raw, ch) }, want)
	}
	for ch, subs := range kept {
		if n := raw.Publish(ctx, ch, "x").Val(); n != 1 {
			t.Fatalf("PUBLISH reached %d subscribers, want 1", n)
		}
		for i, sub := range subs {
			if !woken(sub, wakeTimeout) {
				t.Fatalf("kept waiter %d of %s not woken", i, ch)
			}
			sub.Close()
		}
	}

	hammer(false)
	t.Logf("%d Subscribe/Close rounds sent %d SUBSCRIBEs", 2*workers*rounds, commandCalls(t, raw, "subscribe")-subscribes)
	// Channels awaiting the reply of a SUBSCRIBE whose caller gave up are
	// dropped when the reply arrives.
	eventually(t, wakeTimeout, func() bool { return h.Stats() == notify.Stats{Connections: 1} },
		"with no waiters left Stats() = %+v, want 1 connection and nothing else", func() any { return h.Stats() })
	for i, ch := range chans {
		eventually(t, wakeTimeout, func() bool { return numSub(t, raw, ch) == 0 }, "channel %d still subscribed with no waiters", i)
	}
}

// A Subscribe whose ctx is already done, or ends before the server's
// confirmation, returns an error matching ctx.Err() and leaves no waiter.
func TestHub_subscribeCtx(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		_, c := redistest.Miniredis(t)
		h := newHub(t, c)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		sub, err := h.Subscribe(ctx, channelName(t, 0), notify.WakeOne)
		if sub != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Subscribe = %v, %v; want nil, context.Canceled", sub, err)
		}
		if st := h.Stats(); st != (notify.Stats{}) {
			t.Errorf("Stats() = %+v, want nothing registered and no connection", st)
		}
	})

	t.Run("expires before the confirmation", func(t *testing.T) {
		s := redistest.StartServer(t)
		h := newHub(t, s.Client(t))
		raw := s.Client(t)
		ch := channelName(t, 0)
		other := subscribe(t, h, channelName(t, 1), notify.WakeAll) // the connection is up
		s.Pause(500 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		sub, err := h.Subscribe(ctx, ch, notify.WakeOne)
		if sub != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Subscribe = %v, %v; want nil, context.DeadlineExceeded", sub, err)
		}
		if st := h.Stats(); st.Waiters != 1 {
			t.Errorf("Stats() = %+v, want only the other waiter", st)
		}
		// Once the server answers, the abandoned channel is unsubscribed.
		eventually(t, wakeTimeout, func() bool { return h.Stats().Channels == 1 }, "the abandoned channel is still registered")
		eventually(t, wakeTimeout, func() bool { return numSub(t, raw, ch) == 0 }, "the abandoned channel is still subscribed")
		if woken(other, quietPeriod) {
			t.Error("the other waiter was woken: the connection was re-established")
		}
	})

	// A deadline that passes just before or while the SUBSCRIBE is written
	// must not become the write deadline of the shared connection: missing
	// it would make go-redis drop the connection, and the reconnect would
	// wake every waiter of the Hub.
	t.Run("deadline never breaks the shared connection", func(t *testing.T) {
		s := redistest.StartServer(t)
		c, name := named(t, s)
		h := newHub(t, c)
		raw := s.Client(t)
		other := subscribe(t, h, channelName(t, "other"), notify.WakeAll)
		id := field(pubsubConns(t, raw, name)[0], "id")
		var expired, ok int
		for i := range 200 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%20)*20*time.Microsecond)
			sub, err := h.Subscribe(ctx, channelName(t, i), notify.WakeOne)
			cancel()
			switch {
			case err == nil:
				ok++
				sub.Close()
			case errors.Is(err, context.DeadlineExceeded):
				expired++
			default:
				t.Fatalf("Subscribe %d: %v, want nil or context.DeadlineExceeded", i, err)
			}
		}
		t.Logf("%d Subscribes succeeded, %d expired", ok, expired)
		if woken(other, quietPeriod) {
			t.Fatal("a waiter on another channel was woken: the shared connection was re-established")
		}
		if conns := pubsubConns(t, raw, name); len(conns) != 1 || field(conns[0], "id") != id {
			t.Fatalf("pubsub connections %v, want the original one (id=%s)", conns, id)
		}
		eventually(t, wakeTimeout, func() bool { return h.Stats() == notify.Stats{Connections: 1, Channels: 1, Waiters: 1} },
			"Stats() = %+v, want only the other waiter", func() any { return h.Stats() })
	})
}

// commandCalls returns how many times the server has run command, from
// INFO commandstats.
func commandCalls(t *testing.T, c *redis.Client, command string) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+command+":calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// dialGate is a hook that makes new connections fail while it is shut.
type dialGate struct{ shut atomic.Bool }

func (g *dialGate) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g.shut.Load() {
			return nil, errors.New("dial refused (injected)")
		}
		return next(ctx, network, addr)
	}
}
func (g *dialGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *dialGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Subscribe whose SUBSCRIBE cannot be sent fails with the Redis error and
// leaves nothing behind: no waiter, no channel kept open forever awaiting a
// reply that will never come.
func TestHub_subscribeSendFails(t *testing.T) {
	_, c := redistest.Miniredis(t)
	var gate dialGate
	c.AddHook(&gate)
	h := newHub(t, c, notify.WithIdleTimeout(100*time.Millisecond))
	ch := channelName(t, 0)
	gate.shut.Store(true)
	sub, err := h.Subscribe(context.Background(), ch, notify.WakeOne)
	if sub != nil || err == nil {
		t.Fatalf("Subscribe with no connection = %v, %v; want an error", sub, err)
	}
	t.Logf("Subscribe: %v", err)
	if st := h.Stats(); st.Channels != 0 || st.Waiters != 0 {
		t.Errorf("Stats() = %+v after the failed Subscribe, want no channel and no waiter", st)
	}
	eventually(t, wakeTimeout, func() bool { return h.Stats().Connections == 0 }, "the unused connection stays open")

	gate.shut.Store(false)
	sub = subscribe(t, h, ch, notify.WakeOne)
	if err := c.Publish(context.Background(), ch, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if !woken(sub, wakeTimeout) {
		t.Fatal("waiter not woken once connections work again")
	}
}
