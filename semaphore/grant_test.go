package semaphore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// The names of latchkey's keys beside a semaphore's.
func queueKey(name string) string { return "latchkey_semaphore_queue:{" + name + "}" }
func grantKey(name string) string { return "latchkey_semaphore_grant:{" + name + "}" }

// waitQueue waits until the queue of the semaphore name holds n waiters.
func waitQueue(t *testing.T, c *redis.Client, name string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.LLen(context.Background(), queueKey(name)).Val() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s holds %d waiters, want %d", name, c.LLen(context.Background(), queueKey(name)).Val(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

const wait2s = 2 * time.Second

// A release grants the permit to the waiter at the head of the queue: the
// permit is off the count at once, Redisson's channel carries the count
// left (0), and the waiter returns from Acquire after one command of its
// own, the take that confirms the grant: no grant is left outstanding
// when Acquire returns, and nothing more is sent after it.
func TestGrant_confirmed(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	// A pattern, which PUBSUB NUMSUB does not count: a plain subscriber
	// would be a Redisson waiter, to which a release yields.
	sub := raw.PSubscribe(ctx, "redisson_sc:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	a := semaphore.New(client(t, s), name)
	if err := a.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, sub, "1")
	if err := a.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var sent locktest.Commands
	bc := client(t, s)
	bc.AddHook(&sent)
	b := semaphore.New(bc, name)
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx, 1) }()
	waitQueue(t, raw, name, 1)
	time.Sleep(20 * time.Millisecond) // b asleep, its attempts over
	before := sent.N()
	if err := a.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait2s):
		t.Fatal("the waiter was not served by the release")
	}
	if n := sent.N() - before; n != 1 {
		t.Errorf("the granted waiter sent %d commands before Acquire returned, want 1 (its take)", n)
	}
	if n := raw.ZCard(ctx, grantKey(name)).Val(); n != 0 {
		t.Errorf("%d grants outstanding after Acquire returned: it did not confirm its grant", n)
	}
	expectMessage(t, sub, "0")
	time.Sleep(handoff.Grace + 50*time.Millisecond) // past the grace
	if n := sent.N() - before; n != 1 {
		t.Errorf("the granted waiter sent %d commands after the grace, want 1", n)
	}
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count after the grace = %q, want \"0\": a taken grant was given back", v)
	}
	if err := b.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Errorf("count at the end = %q, want \"1\"", v)
	}
}

// slowScripts delays a client's next script call by d, once armed.
type slowScripts struct {
	d     time.Duration
	armed atomic.Bool
}

func (h *slowScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *slowScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *slowScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); (n == "evalsha" || n == "eval") && h.armed.CompareAndSwap(true, false) {
			time.Sleep(h.d)
		}
		return next(ctx, cmd)
	}
}

// A waiter whose take comes after the grace (a slow network, a paused
// process) finds its grant taken back and handed on: it does not return,
// does not take the permit off the count again, and waits on, to be
// served by the next release. This is the over-admission the take guards
// against: the permit is never held by two callers at once.
func TestGrant_lateTake(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	a := semaphore.New(client(t, s), name)
	if err := a.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	slow := &slowScripts{d: handoff.Grace + 100*time.Millisecond}
	bc := client(t, s)
	bc.AddHook(slow)
	late, next := make(chan error, 1), make(chan error, 1)
	go func() { late <- semaphore.New(bc, name).Acquire(ctx, 1) }()
	waitQueue(t, raw, name, 1)
	c := semaphore.New(client(t, s), name)
	go func() { next <- c.Acquire(ctx, 1) }()
	waitQueue(t, raw, name, 2)
	time.Sleep(20 * time.Millisecond) // both asleep
	slow.armed.Store(true)
	if err := a.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The next waiter, told so, takes the permit once the grace is over.
	select {
	case err := <-next:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-late:
		t.Fatalf("the late waiter returned %v, its grant taken back", err)
	case <-time.After(handoff.Grace + wait2s):
		t.Fatal("the next waiter was not served after the grace")
	}
	time.Sleep(2 * slow.d) // the late take answered
	select {
	case err := <-late:
		t.Fatalf("the late waiter returned %v while the next holds the only permit", err)
	default:
	}
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count while one holds = %q, want \"0\" (a late take took the permit off again?)", v)
	}
	if n := raw.LLen(ctx, queueKey(name)).Val(); n != 1 {
		t.Errorf("%d queued after the late take, want 1: the late waiter waits on", n)
	}
	if err := c.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	woken(t, late, "the late waiter", func() error { return nil })
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count while the late waiter holds = %q, want \"0\"", v)
	}
}

// release of one permit.
func TestGrant_fifoAcrossClients(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	const waiters = 8
	served := make(chan int, waiters)
	for i := range waiters {
		sem := semaphore.New(client(t, s), name)
		go func() {
			if sem.Acquire(ctx, 1) == nil {
				served <- i
			}
		}()
		waitQueue(t, raw, name, int64(i+1))
	}
	releaser := semaphore.New(client(t, s), name)
	for want := range waiters {
		if err := releaser.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-served:
			if got != want {
				t.Fatalf("release %d served waiter %d, want %d", want, got, want)
			}
		case <-time.After(wait2s):
			t.Fatalf("release %d served nobody", want)
		}
	}
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count at the end = %q, want \"0\"", v)
	}
}

// TestSemaphore_waitChild is the child of TestGrant_deadWaiter: it prints
// WAITING and blocks in Acquire until killed.
func TestSemaphore_waitChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("helper process for TestGrant_deadWaiter")
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("LATCHKEY_ADDR")})
	fmt.Println("WAITING")
	_ = semaphore.New(c, os.Getenv("LATCHKEY_NAME")).Acquire(context.Background(), 1)
	time.Sleep(time.Minute)
}

// The first waiter in line dies (a child process SIGKILLed while queued,
// just before the release): the release's permit goes to the next waiter
// within the grace (at once, when the server finds the dead client's
// connection gone), and none is lost.
func TestGrant_deadWaiter(t *testing.T) {
	if redistest.IsChild() {
		return
	}
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	child := redistest.StartChild(t, "TestSemaphore_waitChild", "LATCHKEY_ADDR="+s.Addr(), "LATCHKEY_NAME="+name)
	child.WaitLine(t, "WAITING", 30*time.Second)
	waitQueue(t, raw, name, 1)
	next := semaphore.New(client(t, s), name)
	got := make(chan time.Time, 1)
	go func() {
		if next.Acquire(ctx, 1) == nil {
			got <- time.Now()
		}
		close(got)
	}()
	waitQueue(t, raw, name, 2)
	child.Kill()
	released := time.Now()
	if err := semaphore.New(client(t, s), name).Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case at, ok := <-got:
		if !ok {
			t.Fatal("Acquire failed")
		}
		d := at.Sub(released)
		t.Logf("the next waiter acquired %v after the release (grace %v)", d, handoff.Grace)
		if d > handoff.Grace+wait2s {
			t.Errorf("a dead first waiter held things up for %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never acquired")
	}
	if err := next.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Errorf("count at the end = %q, want \"1\"", v)
	}
}

// An acquisition's request record goes once the call has its permits,
// whether it took them at once or after a release granted them: no
// record of a finished call is left to its TTL. The clients pause 500ms
// before a resend, so that a loaded machine's slow answers still count as
// answered at their only send.
func TestSemaphore_acquisitionRecordsGo(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := semName(t)
	patient := func() *redis.Client {
		c := s.Client(t, func(o *redis.Options) { o.MinRetryBackoff, o.MaxRetryBackoff = 500*time.Millisecond, time.Second })
		t.Cleanup(func() { _ = latchkey.Close(c) })
		return c
	}
	holder := semaphore.New(patient(), name)
	c := patient()
	h := hub(t, c)
	waiter := semaphore.New(c, name, semaphore.WithHub(h))
	if ok, err := holder.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := holder.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- waiter.Acquire(ctx, 1) }()
	waitWaiters(t, h, 1)
	if err := holder.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := waiter.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	records := keys.Once(name, "*")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left, err := s.Client(t).Keys(ctx, records).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request records left 5s after the calls: %q", left)
		}
	}
}

// A client listening on Redisson's channel by a pattern (a latchkey
// watch) waits for nothing: a release it hears does not give Redisson's
// waiters a place in the queue, which would hold later releases' permits
// back for them (handoff.Yield).
func TestGrant_patternListenerIsNoWaiter(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	watch := raw.PSubscribe(ctx, keys.SemaphoreOf(name).Channel)
	defer watch.Close()
	if _, err := watch.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	holder := semaphore.New(client(t, s), name)
	if ok, err := holder.TrySetPermits(ctx, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := holder.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 2)
	for range 2 {
		w, h := watched(t, s, name)
		go func() { got <- w.Acquire(ctx, 1) }()
		waitWaiters(t, h, 1)
	}
	if err := holder.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if q := raw.LRange(ctx, queueKey(name), 0, -1).Val(); slices.Contains(q, "redisson") {
		t.Errorf("queue after a release heard by a pattern listener = %q: Redisson's waiters placed", q)
	}
	if err := holder.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
