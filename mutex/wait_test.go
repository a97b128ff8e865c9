package mutex_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// TestMutex_waitersAreWoken: a waiter blocked behind a watchdog hold (PTTL
// 30s) acquires within milliseconds of Unlock, and a contended acquisition
// costs a bounded number of commands: no fixed-interval retries.
func TestMutex_waitersAreWoken(t *testing.T) {
	s := redistest.StartServer(t) // its own server, so that command counts are ours
	name := lockName(t)
	ctx := context.Background()
	raw := s.Client(t)
	holder := mutex.New(client(t, s), name)
	waiter := mutex.New(client(t, s), name)
	const rounds = 20
	var lat []time.Duration
	before := evalCalls(t, raw)
	for range rounds {
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			if waiter.Lock(ctx) == nil {
				got <- time.Now()
			}
			close(got)
		}()
		waitForWaiter(t, raw, name)
		time.Sleep(20 * time.Millisecond) // let it settle into its sleep
		released := time.Now()
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		at, ok := <-got
		if !ok {
			t.Fatal("waiter's Lock failed")
		}
		lat = append(lat, at.Sub(released))
		if err := waiter.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	calls := evalCalls(t, raw) - before
	slices.Sort(lat)
	t.Logf("wake-up latency after Unlock: median %v, max %v; %.1f script calls per round (2 locks, 2 unlocks)",
		lat[len(lat)/2], lat[len(lat)-1], float64(calls)/rounds)
	if lat[len(lat)/2] > time.Second {
		t.Errorf("median wake-up %v: waiters are not woken by the unlock message", lat[len(lat)/2])
	}
	// Per round: holder lock + unlock, waiter's first attempt, its attempt
	// after subscribing, its attempt when woken, its unlock: 6.
	if calls > 7*rounds {
		t.Errorf("%d script calls for %d rounds: more than the wake-up path needs", calls, rounds)
	}
}

func evalCalls(t *testing.T, c *redis.Client) int64 {
	info := c.Info(context.Background(), "commandstats").Val()
	var n int64
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:") || strings.HasPrefix(line, "cmdstat_eval:") {
			calls, _, _ := strings.Cut(strings.TrimPrefix(line[strings.Index(line, ":")+1:], "calls="), ",")
			v, _ := strconv.ParseInt(calls, 10, 64)
			n += v
		}
	}
	return n
}

func TestMutex_Lock_ctxCancel(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	hub := pubsub.New(client(t, s))
	defer hub.Close()
	waiter := mutex.New(client(t, s), name, mutex.WithHub(hub))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- waiter.Lock(ctx) }()
	waitForWaiter(t, raw, name)
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Lock = %v, want context.Canceled", err)
		}
		t.Logf("cancelled Lock returned after %v", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Fatal("cancelled Lock did not return")
	}
	if st := hub.Stats(); st.Waiters != 0 {
		t.Errorf("hub still has %d waiters", st.Waiters)
	}
	flight.Settle() // the waiter leaves the queue off its caller's path
	if fields := raw.HKeys(context.Background(), name).Val(); len(fields) != 1 {
		t.Errorf("lock hash fields = %v, want only the holder's", fields)
	}
	if n := raw.LLen(context.Background(), "latchkey_lock_queue:{"+name+"}").Val(); n != 0 {
		t.Errorf("the cancelled waiter left %d queue entries", n)
	}

	deadline, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if err := waiter.Lock(deadline); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past its deadline = %v, want context.DeadlineExceeded", err)
	}
	_ = holder.Unlock(context.Background())
}

func TestMutex_TryLock_zeroWaitIsOneAttempt(t *testing.T) {
	s := redistest.StartServer(t)
	name := lockName(t)
	raw := s.Client(t)
	holder := mutex.New(client(t, s), name)
	ctx := context.Background()
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	m := mutex.New(client(t, s), name)
	for _, wait := range []time.Duration{0, -time.Second} {
		before := evalCalls(t, raw)
		if ok, err := m.TryLock(ctx, wait); ok || err != nil {
			t.Fatalf("TryLock(%v) = %v, %v on a held lock", wait, ok, err)
		}
		if n := evalCalls(t, raw) - before; n != 1 {
			t.Errorf("TryLock(%v) ran %d scripts, want 1", wait, n)
		}
	}
	if n := raw.PubSubNumSub(ctx, "redisson_lock__channel:{"+name+"}").Val(); n["redisson_lock__channel:{"+name+"}"] != 0 {
		t.Error("TryLock(0) subscribed")
	}
}

func TestMutex_fencing(t *testing.T) {
	s := server(t)
	name := lockName(t)
	ctx := context.Background()
	a := mutex.New(client(t, s), name)
	b := mutex.New(client(t, s), name)
	var last int64
	for i := range 6 {
		m := a
		if i%2 == 1 {
			m = b
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if tok := m.Token(); tok <= last {
			t.Fatalf("token %d after %d: not increasing", tok, last)
		} else {
			last = tok
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if m.Token() != 0 {
			t.Fatal("Token() of an unheld handle is not 0")
		}
	}

	// Across processes: a child locks, prints its token and unlocks.
	child := redistest.StartChild(t, "TestMutex_crashChild",
		"LATCHKEY_ADDR="+s.Addr(), "LATCHKEY_NAME="+name, "LATCHKEY_UNLOCK=1")
	line := child.WaitLine(t, "LOCKED", 30*time.Second)
	childTok, _ := strconv.ParseInt(strings.TrimPrefix(line, "LOCKED "), 10, 64)
	child.WaitLine(t, "UNLOCKED", 30*time.Second)
	if childTok <= last {
		t.Fatalf("child's token %d not above %d", childTok, last)
	}
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Token() <= childTok {
		t.Fatalf("token %d after the child's %d", a.Token(), childTok)
	}
	_ = a.Unlock(ctx)
}

// TestMutex_noHerdAcrossClients: waiters in different clients (as in
// different processes) queue up; each release sets off about one attempt,
// not one per waiting client, and they acquire in the order they queued.
func TestMutex_noHerdAcrossClients(t *testing.T) {
	s := redistest.StartServer(t) // its own server, so that command counts are ours
	name := lockName(t)
	raw := s.Client(t)
	ctx := context.Background()
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const waiters = 6
	order := make(chan int, waiters)
	queue := "latchkey_lock_queue:{" + name + "}"
	for i := range waiters {
		m := mutex.New(client(t, s), name)
		go func() {
			if m.Lock(ctx) != nil {
				return
			}
			order <- i
			time.Sleep(5 * time.Millisecond)
			_ = m.Unlock(ctx)
		}()
		deadline := time.Now().Add(10 * time.Second)
		for raw.LLen(ctx, queue).Val() < int64(i+1) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond) // every waiter asleep
	before := evalCalls(t, raw)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for want := range waiters {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d acquired in turn %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d waiters acquired", want, waiters)
		}
	}
	time.Sleep(50 * time.Millisecond) // the last Unlock
	calls := evalCalls(t, raw) - before
	t.Logf("%d script calls for %d handoffs (unlock + attempt each: %d)", calls, waiters, 2*waiters+1)
	if calls > 3*waiters+1 {
		t.Errorf("%d script calls for %d handoffs: waiters in other clients herd on each release", calls, waiters)
	}
	if n := raw.Exists(ctx, queue, "latchkey_lock_timeout:{"+name+"}").Val(); n != 0 {
		t.Errorf("queue keys left behind")
	}
}
