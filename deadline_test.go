package latchkey_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// The caller's contract at the deadline edge, against a server that is not
// there: every call returns by its ctx deadline (give-up clean-up runs off
// the caller's path), a single attempt is one attempt, and a call without a
// deadline gives up within its client's ride-out. The bounds are generous:
// they tell "by the deadline" from "seconds past it", as before this
// contract, and hold on a loaded machine.
const pastDeadline = 750 * time.Millisecond

// deadAddr returns a loopback address nobody listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// deadClient returns a client of deadAddr. go-redis's own retries make
// each request against it take about 1.7s; a client that wants a call to
// give up soon makes none.
func deadClient(t *testing.T, opts ...func(*redis.Options)) redis.UniversalClient {
	o := &redis.Options{Addr: deadAddr(t)}
	for _, f := range opts {
		f(o)
	}
	return closeLater(t, redis.NewClient(o))
}

// blocking is every blocking acquisition, made on client.
var blocking = []struct {
	name string
	call func(ctx context.Context, c redis.UniversalClient, name string) error
}{
	{"mutex.Lock", func(ctx context.Context, c redis.UniversalClient, n string) error { return mutex.New(c, n).Lock(ctx) }},
	{"fairlock.Lock", func(ctx context.Context, c redis.UniversalClient, n string) error {
		return fairlock.New(c, n).Lock(ctx)
	}},
	{"rwlock.Lock", func(ctx context.Context, c redis.UniversalClient, n string) error { return rwlock.New(c, n).Lock(ctx) }},
	{"rwlock.RLock", func(ctx context.Context, c redis.UniversalClient, n string) error { return rwlock.New(c, n).RLock(ctx) }},
	{"semaphore.Acquire", func(ctx context.Context, c redis.UniversalClient, n string) error {
		return semaphore.New(c, n).Acquire(ctx, 1)
	}},
	{"permitsemaphore.Acquire", func(ctx context.Context, c redis.UniversalClient, n string) error {
		_, err := permitsemaphore.New(c, n).Acquire(ctx, permitsemaphore.Forever)
		return err
	}},
	{"countdownlatch.Wait", func(ctx context.Context, c redis.UniversalClient, n string) error {
		return countdownlatch.New(c, n).Wait(ctx)
	}},
	{"multilock.Lock", func(ctx context.Context, c redis.UniversalClient, n string) error {
		return multilock.New(mutex.New(c, n+"-a"), mutex.New(c, n+"-b")).Lock(ctx)
	}},
	{"redlock.Lock", func(ctx context.Context, c redis.UniversalClient, n string) error {
		return redlock.New([]redis.UniversalClient{c}, n).Lock(ctx)
	}},
}

// Every blocking call given a deadline returns by it, with an error that
// matches context.DeadlineExceeded, when the server refuses connections.
func TestContract_deadlineAgainstDeadServer(t *testing.T) {
	c := deadClient(t)
	for _, b := range blocking {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			const d = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			err := b.call(ctx, c, t.Name())
			if took := time.Since(start); took > d+pastDeadline {
				t.Errorf("returned %v after the start, %v past its deadline", took, took-d)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error = %v, want one matching context.DeadlineExceeded", err)
			}
		})
	}
}

// A call given no deadline against a dead server gives up within its
// client's ride-out, with the outage's error, and so does a clean-up call.
func TestContract_rideOutAgainstDeadServer(t *testing.T) {
	c := deadClient(t, func(o *redis.Options) { o.MaxRetries = -1 })
	const rideOut = 300 * time.Millisecond
	latchkey.SetRideOut(c, rideOut)
	bound := rideOut + 2*time.Second // the last request, on a loaded machine
	calls := append(blocking[:len(blocking):len(blocking)], []struct {
		name string
		call func(ctx context.Context, c redis.UniversalClient, name string) error
	}{
		{"countdownlatch.CountDown", func(ctx context.Context, c redis.UniversalClient, n string) error {
			return countdownlatch.New(c, n).CountDown(ctx)
		}},
		{"semaphore.Release", func(ctx context.Context, c redis.UniversalClient, n string) error {
			return semaphore.New(c, n).Release(ctx, 1)
		}},
	}...)
	for _, b := range calls {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			err := b.call(context.Background(), c, t.Name())
			if took := time.Since(start); took > bound {
				t.Errorf("returned after %v, want within the %v ride-out (bound %v)", took, rideOut, bound)
			}
			if err == nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want the outage's error", err)
			}
		})
	}
}

// A single attempt is one attempt: TryLock(ctx, 0) and its kin return with
// that attempt's error, long before a distant deadline.
func TestContract_singleAttemptAgainstDeadServer(t *testing.T) {
	c := deadClient(t)
	for _, b := range []struct {
		name string
		call func(ctx context.Context, name string) error
	}{
		{"mutex.TryLock", func(ctx context.Context, n string) error { _, err := mutex.New(c, n).TryLock(ctx, 0); return err }},
		{"fairlock.TryLock", func(ctx context.Context, n string) error { _, err := fairlock.New(c, n).TryLock(ctx, 0); return err }},
		{"rwlock.TryLock", func(ctx context.Context, n string) error { _, err := rwlock.New(c, n).TryLock(ctx, 0); return err }},
		{"rwlock.TryRLock", func(ctx context.Context, n string) error { _, err := rwlock.New(c, n).TryRLock(ctx, 0); return err }},
		{"semaphore.TryAcquire", func(ctx context.Context, n string) error {
			_, err := semaphore.New(c, n).TryAcquire(ctx, 1, 0)
			return err
		}},
		{"permitsemaphore.TryAcquire", func(ctx context.Context, n string) error {
			_, _, err := permitsemaphore.New(c, n).TryAcquire(ctx, 0, permitsemaphore.Forever)
			return err
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := b.call(ctx, t.Name())
			if err == nil || ctx.Err() != nil {
				t.Errorf("error = %v (ctx: %v), want the attempt's own error before the deadline", err, ctx.Err())
			}
		})
	}
}

// A waiter whose server dies while it waits returns by its deadline.
func TestContract_serverKilledMidWait(t *testing.T) {
	s := redistest.StartServer(t)
	holder := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	waiter := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	ctx := context.Background()
	if err := mutex.New(holder, t.Name()).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const d = 1500 * time.Millisecond
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	time.AfterFunc(300*time.Millisecond, s.Kill)
	start := time.Now()
	err := mutex.New(waiter, t.Name()).Lock(wctx)
	if took := time.Since(start); took > d+pastDeadline {
		t.Errorf("Lock returned %v after the start, %v past its deadline", took, took-d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock = %v, want an error matching context.DeadlineExceeded", err)
	}
}

// Every blocking call given a deadline returns by it, with an error that
// matches context.DeadlineExceeded, when the server stalls (SIGSTOP: a
// hung server, or a network that drops packets): on a client with
// go-redis's default options, which apply no ctx deadline to a read, and
// on one with ContextTimeoutEnabled and no retries, whose read fails at
// the deadline. A
// lock that an attempt left on its way takes after the stall is given
// back by the clean-up, which waits for that attempt's answer on the
// first client: the lock is free for the next caller once the clean-ups
// are done.
func TestContract_deadlineAgainstStalledServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test servers cannot be paused on windows")
	}
	t.Run("default", func(t *testing.T) { deadlineAgainstStall(t, false) })
	t.Run("ContextTimeoutEnabled", func(t *testing.T) { deadlineAgainstStall(t, true) })
}

func deadlineAgainstStall(t *testing.T, ctxTimeouts bool) {
	s := redistest.StartServer(t)
	o := &redis.Options{Addr: s.Addr()}
	if ctxTimeouts {
		// Without go-redis's retries, the read that fails at the deadline
		// is the call's last word.
		o.ContextTimeoutEnabled, o.MaxRetries = true, -1
	}
	c := closeLater(t, redis.NewClient(o))
	// The client knows the server before it stalls: its scripts, its
	// replica count, its Hub's connection.
	ctx := context.Background()
	if err := latchkey.Preload(ctx, c); err != nil {
		t.Fatal(err)
	}
	warm := mutex.New(c, t.Name())
	if err := warm.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := warm.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	const d, stall = 300 * time.Millisecond, 2 * time.Second
	type result struct {
		took time.Duration
		err  error
	}
	results := make([]result, len(blocking))
	var wg sync.WaitGroup
	s.Pause(stall)
	for i, b := range blocking {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			err := b.call(ctx, c, t.Name()+"-"+b.name)
			results[i] = result{time.Since(start), err}
		}()
	}
	wg.Wait()
	for i, b := range blocking {
		r := results[i]
		if r.took > d+pastDeadline {
			t.Errorf("%s returned %v after the start, %v past its deadline", b.name, r.took, r.took-d)
		}
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("%s: error = %v, want one matching context.DeadlineExceeded", b.name, r.err)
		}
	}
	if ctxTimeouts {
		return // go-redis dropped the requests at the deadline: nothing to wait for
	}
	time.Sleep(stall) // the server answers again
	flight.Settle()
	other := closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
	for _, name := range []string{"mutex.Lock", "fairlock.Lock", "rwlock.Lock"} {
		n := t.Name() + "-" + name
		if ok, err := mutex.New(other, n).TryLock(context.Background(), 0); !ok || err != nil {
			t.Errorf("%s: after the stall and the clean-ups, TryLock = %v, %v; want the lock free", name, ok, err)
		}
	}
}
