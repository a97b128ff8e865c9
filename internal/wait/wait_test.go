package wait_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// Generous bounds: they only catch a loop that is stuck or sleeps for a
// wrong bound, and hold on a loaded 2-core machine under -race.
const (
	slack    = time.Second      // "promptly"
	giveUp   = 10 * time.Second // a call that should have returned long ago
	longBusy = time.Hour        // a retry bound that must never be reached
)

// fake is a scripted Attempt: it fails with retry until succeed is set,
// recording when it ran, and an Abandon that counts its calls.
type fake struct {
	retry   time.Duration
	err     error
	succeed atomic.Bool

	mu        sync.Mutex
	at        []time.Time
	abandoned int
	abandonOK bool // Abandon's ctx was live and bounded
}

func (f *fake) attempt(ctx context.Context) (bool, time.Duration, error) {
	f.mu.Lock()
	f.at = append(f.at, time.Now())
	f.mu.Unlock()
	if f.err != nil {
		return false, 0, f.err
	}
	return f.succeed.Load(), f.retry, nil
}

func (f *fake) abandon(ctx context.Context) {
	_, hasDeadline := ctx.Deadline()
	f.mu.Lock()
	f.abandoned++
	f.abandonOK = ctx.Err() == nil && hasDeadline
	f.mu.Unlock()
}

func (f *fake) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.at)
}

// gaps returns the time between consecutive attempts.
func (f *fake) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ds []time.Duration
	for i := 1; i < len(f.at); i++ {
		ds = append(ds, f.at[i].Sub(f.at[i-1]))
	}
	return ds
}

// checkAbandoned fails t unless Abandon ran exactly want times, with a
// live bounded ctx, once the clean-ups under way have ended.
func (f *fake) checkAbandoned(t *testing.T, want int) {
	t.Helper()
	flight.Settle()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.abandoned != want {
		t.Errorf("Abandon ran %d times, want %d", f.abandoned, want)
	}
	if want > 0 && !f.abandonOK {
		t.Error("Abandon's ctx was cancelled or unbounded")
	}
}

// hubOn returns a Hub on a miniredis server, and a client of that server.
func hubOn(t *testing.T) (*notify.Hub, *redis.Client) {
	_, c := redistest.Miniredis(t)
	h := notify.New(c)
	t.Cleanup(func() { _ = h.Close() })
	return h, c
}

func (f *fake) spec(h *notify.Hub, channel string) wait.Spec {
	return wait.Spec{Hub: h, Wake: wait.Channel{Name: channel, Policy: notify.WakeOne}, Call: f.call(f.attempt)}
}

// call returns a Call of attempt, abandoning as f does.
func (f *fake) call(attempt wait.Attempt) wait.Call { return &call{attempt, f.abandon} }

// call is a Call made of two functions.
type call struct {
	attempt wait.Attempt
	abandon func(ctx context.Context)
}

func (c *call) Attempt(ctx context.Context) (bool, time.Duration, error) { return c.attempt(ctx) }

func (c *call) Abandon(ctx context.Context) {
	if c.abandon != nil {
		c.abandon(ctx)
	}
}

// run calls Until in a goroutine and returns a channel with its result.
func run(ctx context.Context, budget time.Duration, s wait.Spec) <-chan result {
	out := make(chan result, 1)
	go func() {
		start := time.Now()
		ok, err := wait.Until(ctx, budget, s)
		out <- result{ok, err, time.Since(start)}
	}()
	return out
}

type result struct {
	ok      bool
	err     error
	elapsed time.Duration
}

func await(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(giveUp):
		t.Fatal("Until did not return")
		return result{}
	}
}

// untilAttempts waits until f has made n attempts.
func untilAttempts(t *testing.T, f *fake, n int) {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for f.attempts() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts, want %d", f.attempts(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUntil_budgetRunsOut(t *testing.T) {
	h, _ := hubOn(t)
	f := &fake{retry: -1} // only a message could tell: Backstop, capped by the budget
	const budget = 300 * time.Millisecond
	r := await(t, run(context.Background(), budget, f.spec(h, t.Name())))
	if r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v; want false, nil", r.ok, r.err)
	}
	if r.elapsed < budget || r.elapsed > budget+slack {
		t.Errorf("returned after %v, want about the budget %v", r.elapsed, budget)
	}
	// The first attempt, one once subscribed, one when the budget ends.
	if n := f.attempts(); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	f.checkAbandoned(t, 1)
	if st := h.Stats(); st.Waiters != 0 {
		t.Errorf("Stats() = %+v after Until, want no waiter left", st)
	}
	t.Logf("budget %v: returned after %v", budget, r.elapsed)
}

// A zero budget makes exactly one attempt and never subscribes.
func TestUntil_zeroBudgetOneAttempt(t *testing.T) {
	h, _ := hubOn(t)
	f := &fake{retry: -1}
	ok, err := wait.Until(context.Background(), 0, f.spec(h, t.Name()))
	if ok || err != nil {
		t.Fatalf("Until = %v, %v; want false, nil", ok, err)
	}
	if n := f.attempts(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
	f.checkAbandoned(t, 1)
	if st := h.Stats(); st != (notify.Stats{}) {
		t.Errorf("Stats() = %+v, want no subscription at all", st)
	}

	f.succeed.Store(true)
	ok, err = wait.Until(context.Background(), 0, f.spec(h, t.Name()))
	if !ok || err != nil {
		t.Fatalf("Until = %v, %v; want true, nil", ok, err)
	}
	f.checkAbandoned(t, 1) // not again
}

func TestUntil_ctxEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"cancel", context.Canceled, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}},
		{"deadline", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}},
		{"cancelled before", context.Canceled, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, budget := range []time.Duration{-1, time.Hour} {
				h, _ := hubOn(t)
				f := &fake{retry: longBusy}
				ctx, cancel := tc.ctx()
				r := await(t, run(ctx, budget, f.spec(h, t.Name())))
				cancel()
				if r.ok || !errors.Is(r.err, tc.want) {
					t.Fatalf("budget %v: Until = %v, %v; want an error matching %v", budget, r.ok, r.err, tc.want)
				}
				if r.elapsed > 200*time.Millisecond+slack {
					t.Errorf("budget %v: returned %v after the start, want promptly after ctx ended at 200ms", budget, r.elapsed)
				}
				f.checkAbandoned(t, 1)
				if st := h.Stats(); st.Waiters != 0 {
					t.Errorf("budget %v: Stats() = %+v, want no waiter left", budget, st)
				}
			}
		})
	}
}

// An attempt that fails because ctx ended reports ctx.Err() itself, whatever
// the attempt wrapped.
func TestUntil_attemptErrorAfterCtxEnds(t *testing.T) {
	h, _ := hubOn(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fake{err: errors.New("redis: connection pool: context canceled somewhere")}
	_, err := wait.Until(ctx, -1, f.spec(h, t.Name()))
	if err != context.Canceled {
		t.Fatalf("Until = %v, want context.Canceled itself", err)
	}
}

// An attempt's error ends the wait, returned as is.
func TestUntil_attemptError(t *testing.T) {
	h, _ := hubOn(t)
	boom := errors.New("boom")
	for _, failOn := range []int{1, 2, 3} { // first attempt, after subscribing, after a wake-up
		f := &fake{retry: 20 * time.Millisecond}
		var n atomic.Int32
		s := f.spec(h, t.Name())
		s.Call = f.call(func(ctx context.Context) (bool, time.Duration, error) {
			if n.Add(1) == int32(failOn) {
				return false, 0, boom
			}
			return f.attempt(ctx)
		})
		r := await(t, run(context.Background(), -1, s))
		if r.ok || r.err != boom {
			t.Fatalf("error on attempt %d: Until = %v, %v; want the attempt's error as is", failOn, r.ok, r.err)
		}
		f.checkAbandoned(t, 1)
	}
}

// A message on the channel makes the waiter attempt at once, long before
// its retry bound.
func TestUntil_wakeUpTriggersAttempt(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis-server"} {
		t.Run(backend, func(t *testing.T) {
			var c *redis.Client
			if backend == "miniredis" {
				_, c = redistest.Miniredis(t)
			} else {
				c = redistest.SharedServer(t).Client(t)
			}
			h := notify.New(c)
			defer h.Close()
			f := &fake{retry: longBusy}
			ch := "wait-test:" + t.Name()
			done := run(context.Background(), -1, f.spec(h, ch))
			var lat []time.Duration
			for round := range 5 {
				untilAttempts(t, f, 2+round) // asleep again
				if round == 4 {
					f.succeed.Store(true)
				}
				sent := time.Now()
				if err := c.Publish(context.Background(), ch, "0").Err(); err != nil {
					t.Fatal(err)
				}
				untilAttempts(t, f, 3+round)
				lat = append(lat, time.Since(sent))
			}
			r := await(t, done)
			if !r.ok || r.err != nil {
				t.Fatalf("Until = %v, %v; want true, nil", r.ok, r.err)
			}
			f.checkAbandoned(t, 0)
			slices.Sort(lat)
			if lat[len(lat)-1] > slack {
				t.Errorf("publish-to-attempt latencies %v, want well under the retry bound", lat)
			}
			t.Logf("median publish-to-attempt latency %v", lat[len(lat)/2])
		})
	}
}

// Without a message, the attempt's retry bound triggers the next attempt.
func TestUntil_retryBoundTriggersAttempt(t *testing.T) {
	h, _ := hubOn(t)
	const retry = 100 * time.Millisecond
	f := &fake{retry: retry}
	done := run(context.Background(), -1, f.spec(h, t.Name()))
	untilAttempts(t, f, 6)
	f.succeed.Store(true)
	r := await(t, done)
	if !r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v; want true, nil", r.ok, r.err)
	}
	gaps := f.gaps()[1:] // the first gap is the subscription
	for _, g := range gaps {
		if g < retry-5*time.Millisecond || g > retry+slack {
			t.Errorf("attempts %v apart, want about the retry bound %v", gaps, retry)
			break
		}
	}
	slices.Sort(gaps)
	t.Logf("retry bound %v: median gap between attempts %v", retry, gaps[len(gaps)/2])
	f.checkAbandoned(t, 0)
}
