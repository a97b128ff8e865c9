package countdownlatch_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// latchName returns a latch name unique to t.
func latchName(t *testing.T) string { return "countdownlatch-test:" + t.Name() }

// channel is the latch channel of name, spelled out as Redisson spells it.
func channel(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

// release closes the latchkey resources kept for c (its shared Hub) when t
// ends, before c itself is closed, and returns c.
func release[C redis.UniversalClient](t *testing.T, c C) C {
	t.Cleanup(func() { _ = latchkey.Close(c) })
	return c
}

// mini returns a client of a fresh miniredis server and a function that
// returns new clients of the same server, as other processes would have.
func mini(t *testing.T) (*redis.Client, func() *redis.Client) {
	mr, c := redistest.Miniredis(t)
	release(t, c)
	return c, func() *redis.Client {
		o := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { _ = o.Close() })
		return release(t, o)
	}
}

// server returns a client of the package's shared redis-server and a function
// that returns new clients of it, skipping t (failing it under CI) when
// redis-server is not installed.
func server(t *testing.T) (*redis.Client, func() *redis.Client) {
	s := redistest.SharedServer(t)
	return release(t, s.Client(t)), func() *redis.Client { return release(t, s.Client(t)) }
}

// waitFor polls cond every millisecond until it holds, failing t after 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waiters waits until h has n open Subscriptions: n Waits are blocked.
func waiters(t *testing.T, h *pubsub.Hub, n int) {
	t.Helper()
	waitFor(t, "blocked waiters", func() bool { return h.Stats().Waiters == n })
}

// listen subscribes a raw client to the latch channel of name and returns
// the channel of payloads it receives; it unsubscribes when t ends.
func listen(t *testing.T, c redis.UniversalClient, name string, sharded bool) <-chan string {
	t.Helper()
	ctx := context.Background()
	var ps *redis.PubSub
	if sharded {
		ps = c.SSubscribe(ctx, channel(name))
	} else {
		ps = c.Subscribe(ctx, channel(name))
	}
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 100)
	msgs := ps.Channel()
	go func() {
		for m := range msgs {
			out <- m.Payload
		}
		close(out)
	}()
	t.Cleanup(func() { _ = ps.Close() })
	return out
}

// expect fails t unless the next payload on msgs is want.
func expect(t *testing.T, msgs <-chan string, want string) {
	t.Helper()
	select {
	case got := <-msgs:
		if got != want {
			t.Fatalf("message %q, want %q", got, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("no message, want %q", want)
	}
}

// quiet fails t if a message arrives on msgs within a short while.
func quiet(t *testing.T, msgs <-chan string) {
	t.Helper()
	select {
	case got := <-msgs:
		t.Fatalf("unexpected message %q", got)
	case <-time.After(100 * time.Millisecond):
	}
}

// noLeaks fails t if, once t's other cleanups have run (clients and Hubs
// closed), goroutines of latchkey or of go-redis pub/sub are still alive.
// Call it first, and only from tests that do not run in parallel.
func noLeaks(t *testing.T) {
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := leftovers()
			if left == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines left behind:\n%s", left)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func leftovers() string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, p := range []string{"latchkey/countdownlatch.", "latchkey/pubsub.", "latchkey/internal/wait.", "go-redis/v9.(*PubSub)"} {
			if strings.Contains(g, p) {
				left = append(left, g)
				break
			}
		}
	}
	return strings.Join(left, "\n\n")
}
