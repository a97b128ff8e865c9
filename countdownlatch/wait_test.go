package countdownlatch_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/pubsub"
)

// fast bounds a wake-up that must come from a message: well below the wait
// loop's backstop, which a lost message would cost.
const fast = wait.Backstop / 2

// goWait runs l.Wait in a goroutine and reports its error on the channel.
func goWait(ctx context.Context, l *countdownlatch.Latch) <-chan error {
	done := make(chan error, 1)
	go func() { done <- l.Wait(ctx) }()
	return done
}

// released fails t unless done reports a nil error within d.
func released(t *testing.T, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: Wait = %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: Wait still blocked after %v", what, d)
	}
}

// blocked fails t if done reports anything within a short while.
func blocked(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s: Wait returned %v, want it blocked", what, err)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestLatch_Wait(t *testing.T) {
	noLeaks(t)
	c, newClient := server(t)
	ctx := context.Background()
	name := latchName(t)
	c.Del(ctx, name)
	l := countdownlatch.New(c, name)
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait on a missing latch = %v", err)
	}
	if _, err := l.TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	other := newClient()
	done := goWait(ctx, countdownlatch.New(other, name))
	waiters(t, pubsub.Shared(other), 1)
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	blocked(t, done, "count 1")
	start := time.Now()
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	released(t, done, fast, "count 0")
	t.Logf("released %v after the last CountDown", time.Since(start))
	if n := pubsub.Shared(other).Stats().Waiters; n != 0 {
		t.Errorf("%d subscriptions left open", n)
	}
}

// 1,000 waiters spread over 10 clients (10 processes) are all released by
// one CountDown, through one subscriber connection per client.
func TestLatch_Wait_thousandWaiters(t *testing.T) {
	noLeaks(t)
	s := redistest.StartServer(t) // its own server, so CLIENT LIST counts only ours
	ctx := context.Background()
	name := latchName(t)
	admin := release(t, s.Client(t))
	const clients, perClient = 10, 100
	if ok, err := countdownlatch.New(admin, name).TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}

	ends := make([]time.Time, clients*perClient)
	errs := make([]error, clients*perClient)
	hubs := make([]*pubsub.Hub, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := release(t, s.Client(t))
		hubs[i] = pubsub.Shared(c)
		l := countdownlatch.New(c, name)
		for j := range perClient {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				errs[k] = l.Wait(ctx)
				ends[k] = time.Now()
			}(i*perClient + j)
		}
	}
	for _, h := range hubs {
		waiters(t, h, perClient)
	}
	for i, h := range hubs {
		if n := h.Stats().Connections; n != 1 {
			t.Errorf("client %d: %d subscriber connections, want 1", i, n)
		}
	}
	// A Hub writes its SUBSCRIBE from a goroutine of its own: a waiter it
	// counts may not have reached the server yet.
	var pubConns string
	waitFor(t, "a pub/sub connection per client", func() bool {
		list, err := admin.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
		pubConns = list
		return err == nil && strings.Count(strings.TrimSpace(list), "\n")+1 >= clients
	})
	if n := strings.Count(strings.TrimSpace(pubConns), "\n") + 1; n != clients {
		t.Errorf("the server has %d pub/sub connections, want %d:\n%s", n, clients, pubConns)
	}

	l := countdownlatch.New(admin, name)
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("waiter %d: %v", k, err)
		}
	}
	lat := make([]time.Duration, len(ends))
	for k, e := range ends {
		lat[k] = e.Sub(start)
	}
	slices.Sort(lat)
	last := lat[len(lat)-1]
	t.Logf("%d waiters on %d clients: released %v (median) and %v (last) after the last CountDown was sent",
		len(lat), clients, lat[len(lat)/2], last)
	if last > fast {
		t.Errorf("last waiter released %v after the last CountDown, want < %v", last, fast)
	}
}

func TestLatch_Wait_cancel(t *testing.T) {
	noLeaks(t)
	c, _ := mini(t)
	name := latchName(t)
	l := countdownlatch.New(c, name)
	if _, err := l.TrySetCount(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := goWait(ctx, l)
	waiters(t, pubsub.Shared(c), 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Wait ignored the cancelled context")
	}
	if n := pubsub.Shared(c).Stats().Waiters; n != 0 {
		t.Errorf("%d subscriptions left open", n)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if ok, err := l.TryWait(dctx, time.Hour); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("TryWait past the ctx deadline = %v, %v; want DeadlineExceeded", ok, err)
	}
	if n, _ := l.Count(context.Background()); n != 1 {
		t.Errorf("Count = %d after abandoned waits, want 1", n)
	}
}

func TestLatch_TryWait(t *testing.T) {
	noLeaks(t)
	c, _ := mini(t)
	ctx := context.Background()
	l := countdownlatch.New(c, latchName(t))
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.TryWait(ctx, 0); ok || err != nil {
		t.Errorf("TryWait(0) on count 1 = %v, %v; want false", ok, err)
	}
	start := time.Now()
	if ok, err := l.TryWait(ctx, 50*time.Millisecond); ok || err != nil {
		t.Errorf("TryWait(50ms) on count 1 = %v, %v; want false", ok, err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("TryWait(50ms) gave up after %v", d)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = l.CountDown(ctx)
	}()
	if ok, err := l.TryWait(ctx, 5*time.Second); !ok || err != nil {
		t.Errorf("TryWait with a CountDown to come = %v, %v; want true", ok, err)
	}
}

// Delete releases the waiters of every process, where Redisson's delete
// leaves them blocked.
func TestLatch_Delete_releasesWaiters(t *testing.T) {
	noLeaks(t)
	c, newClient := mini(t)
	ctx := context.Background()
	name := latchName(t)
	if _, err := countdownlatch.New(c, name).TrySetCount(ctx, 5); err != nil {
		t.Fatal(err)
	}
	var dones []<-chan error
	var hubs []*pubsub.Hub
	for range 2 {
		o := newClient()
		hubs = append(hubs, pubsub.Shared(o))
		for range 3 {
			dones = append(dones, goWait(ctx, countdownlatch.New(o, name)))
		}
	}
	for _, h := range hubs {
		waiters(t, h, 3)
	}
	if ok, err := countdownlatch.New(c, name).Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	for _, d := range dones {
		released(t, d, fast, "after Delete")
	}
}

// Go waiters hear Redisson clients: its countDown publishes "0" and its
// delete publishes "1"; either releases a latchkey waiter at once.
func TestLatch_Wait_foreignMessages(t *testing.T) {
	noLeaks(t)
	c, newClient := mini(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		java func(name string)
	}{
		{"countDown", func(name string) {
			c.Decr(ctx, name)
			c.Del(ctx, name)
			c.Publish(ctx, channel(name), "0")
		}},
		{"delete", func(name string) {
			c.Del(ctx, name)
			c.Publish(ctx, channel(name), "1")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := latchName(t)
			c.Set(ctx, name, 1, 0)
			o := newClient()
			done := goWait(ctx, countdownlatch.New(o, name))
			waiters(t, pubsub.Shared(o), 1)
			tc.java(name)
			released(t, done, fast, tc.name)
		})
	}
}
