package notify_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// Generous bounds: they only catch a waiter that is never woken, and hold
// on a loaded 2-core machine under -race.
const (
	wakeTimeout = 5 * time.Second
	quietPeriod = 150 * time.Millisecond // how long "not woken" is watched
)

// newHub returns a Hub on c that t's cleanup closes.
func newHub(t testing.TB, c redis.UniversalClient, opts ...notify.Option) *notify.Hub {
	h := notify.New(c, opts...)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// named returns a client of s whose connections carry a name unique to t,
// so that CLIENT LIST can tell the Hub's connection from others.
func named(t *testing.T, s *redistest.Server) (*redis.Client, string) {
	name := clientName(t)
	return s.Client(t, func(o *redis.Options) { o.ClientName = name }), name
}

func clientName(t *testing.T) string {
	r := strings.NewReplacer("/", "-", " ", "-")
	return "hub-" + r.Replace(t.Name())
}

// channelName returns a channel name unique to t.
func channelName(t *testing.T, suffix any) string {
	return fmt.Sprintf("pubsub-test:%s:%v", t.Name(), suffix)
}

func subscribe(t *testing.T, h *notify.Hub, name string, p notify.WakePolicy) *notify.Subscription {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	sub, err := h.Subscribe(ctx, name, p)
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", name, err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// woken reports whether sub receives a wake-up within d, consuming it.
func woken(sub *notify.Subscription, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-sub.C():
		return true
	case <-timer.C:
		return false
	}
}

// pending reports which of subs hold an unconsumed wake-up, without
// consuming any.
func pending(subs []*notify.Subscription) []int {
	var out []int
	for i, s := range subs {
		if len(s.C()) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// eventually polls cond until it holds or timeout passes, then fails t
// with the message; an argument that is a func() any is called then.
func eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			for i, a := range args {
				if f, ok := a.(func() any); ok {
					args[i] = f()
				}
			}
			t.Fatalf("after %v: "+format, append([]any{timeout}, args...)...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// numSub returns the server's subscriber count of channel.
func numSub(t testing.TB, c redis.Cmdable, channel string) int64 {
	t.Helper()
	m, err := c.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[channel]
}

// pubsubConns returns the lines of CLIENT LIST TYPE pubsub whose client
// name is name.
func pubsubConns(t testing.TB, c *redis.Client, name string) []string {
	t.Helper()
	list, err := c.Do(context.Background(), "CLIENT", "LIST", "TYPE", "pubsub").Text()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(list) {
		if slices.Contains(strings.Fields(line), "name="+name) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// field returns the value of key=value in a CLIENT LIST line.
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
