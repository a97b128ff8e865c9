package redlock_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// With a Hub, waiters of every client queue on the Hub's node and an
// unlock wakes the first of them alone: the others send nothing until their
// turn, and the waiters get the lock in the order they came. The waiter
// behind the one granted is told it is next, and sends nothing for the
// grace either (handoff.Grace: in case the grant is never taken, it then
// looks once): timers never fire early, so this holds on a starved machine
// too.
func TestMutex_WithHub_queue(t *testing.T) {
	ms := minis(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := lockName(t)
	queue := "latchkey_lock_queue:{" + name + "}"
	open := func(sent *sentLog) *redlock.Mutex {
		cs := miniClients(t, ms)
		for _, c := range cs {
			c.(*redis.Client).AddHook(sent)
		}
		// A node timeout far above any stall of a loaded machine: this
		// test is about the queue, not about nodes that do not answer.
		return redlock.New(cs, name, redlock.WithHub(pubsub.Shared(cs[0])),
			redlock.WithRetryDelay(time.Hour), redlock.WithNodeTimeout(10*time.Second))
	}
	var holderSent sentLog
	holder := open(&holderSent)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 4
	sent := make([]sentLog, n)
	order := make(chan int, n)
	errs := make(chan error, n)
	release := make([]chan struct{}, n) // lets waiter i unlock
	var inside atomic.Int32
	for i := range n {
		sent[i].name, sent[i].queue = name, queue
		release[i] = make(chan struct{})
		w := open(&sent[i])
		go func() {
			if err := w.Lock(ctx); err != nil {
				errs <- err
				return
			}
			if inside.Add(1) > 1 {
				errs <- errOverlap
			}
			order <- i
			<-release[i]
			inside.Add(-1)
			errs <- w.Unlock(context.WithoutCancel(ctx))
		}()
		// Queued, listening, and asleep before the next comes: it joined
		// the queue (its place is the next), then looked again once its
		// Hub's subscription was confirmed.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			l, _ := ms[0].List(queue)
			if len(l) == i+1 && sent[i].attempts() >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d not queued within 10s: queue %q, %d attempts", i, l, sent[i].attempts())
			}
		}
	}
	// released[k] is when the release that granted waiter k began: it
	// told waiter k+1 that it is next.
	released := make([]time.Time, n)
	released[0] = time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		w := <-order
		if w != k {
			t.Errorf("waiter %d got the lock in turn %d, want %d", w, k, w)
		}
		// Waiter w holds the lock: those behind it sent nothing since the
		// first release, but the next one, which may look once the grace
		// after its letter is over.
		for j := k + 1; j < n; j++ {
			from := time.Time{} // no command at all
			if j == k+1 {
				from = released[k].Add(handoff.Grace)
			}
			if early := sent[j].between(released[0], from); early > 0 {
				t.Errorf("turn %d: waiter %d sent %d commands before its turn: the unlock woke it", k, j, early)
			}
		}
		if k+1 < n {
			released[k+1] = time.Now()
		}
		close(release[w])
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// sentLog is a go-redis hook that records when a client sent each command
// about the lock (one naming its key: an attempt or a release, on any
// node; connection set-up and the like aside), and counts the attempts
// that reached the queue node (they name the queue key) and were answered.
type sentLog struct {
	name, queue string

	mu     sync.Mutex
	at     []time.Time
	queued int
}

func (s *sentLog) attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// between returns how many commands were sent at or after from but before
// to (if to is zero: at any time from from on).
func (s *sentLog) between(from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.at {
		if !at.Before(from) && (to.IsZero() || at.Before(to)) {
			n++
		}
	}
	return n
}

func (s *sentLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *sentLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.sending([]redis.Cmder{cmd})
		err := next(ctx, cmd)
		s.answered([]redis.Cmder{cmd})
		return err
	}
}

func (s *sentLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.sending(cmds)
		err := next(ctx, cmds)
		s.answered(cmds)
		return err
	}
}

func (s *sentLog) sending(cmds []redis.Cmder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cmd := range cmds {
		if slices.Contains(cmd.Args(), any(s.name)) {
			s.at = append(s.at, time.Now())
		}
	}
}

func (s *sentLog) answered(cmds []redis.Cmder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cmd := range cmds {
		if cmd.Err() == nil && slices.Contains(cmd.Args(), any(s.queue)) {
			s.queued++
		}
	}
}

// An unlock grants the queue node's lock to the first waiter only once the
// other nodes have released it: were they still held (their releases
// slower, as on a starved machine), the waiter would miss the quorum, give
// the lock back and lose its turn to the one behind it.
func TestMutex_WithHub_grantAfterOthers(t *testing.T) {
	ms := minis(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := lockName(t)
	queue := "latchkey_lock_queue:{" + name + "}"
	opts := func(cs []redis.UniversalClient) []redlock.Option {
		return []redlock.Option{redlock.WithHub(pubsub.Shared(cs[0])), redlock.WithRetryDelay(time.Hour),
			redlock.WithNodeTimeout(10 * time.Second)}
	}
	hcs := miniClients(t, ms)
	slow := &slowHook{name: name}
	for _, c := range hcs[1:] {
		c.(*redis.Client).AddHook(slow)
	}
	holder := redlock.New(hcs, name, opts(hcs)...)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 2
	order := make(chan int, n)
	errs := make(chan error, n)
	for i := range n {
		cs := miniClients(t, ms)
		sent := &sentLog{name: name, queue: queue}
		cs[0].(*redis.Client).AddHook(sent)
		w := redlock.New(cs, name, opts(cs)...)
		go func() {
			if err := w.Lock(ctx); err != nil {
				errs <- err
				return
			}
			order <- i
			errs <- w.Unlock(context.WithoutCancel(ctx))
		}()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if l, _ := ms[0].List(queue); len(l) == i+1 && sent.attempts() >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d not queued within 10s", i)
			}
		}
	}
	slow.delay.Store(int64(300 * time.Millisecond))
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for turn := range n {
		if w := <-order; w != turn {
			t.Errorf("waiter %d got the lock in turn %d, want %d", w, turn, w)
		}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// slowHook delays every command naming the lock by delay, once set.
type slowHook struct {
	name  string
	delay atomic.Int64
}

func (h *slowHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *slowHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if d := h.delay.Load(); d > 0 && slices.Contains(cmd.Args(), any(h.name)) {
			time.Sleep(time.Duration(d))
		}
		return next(ctx, cmd)
	}
}

func (h *slowHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

var errOverlap = errOverlapT{}

type errOverlapT struct{}

func (errOverlapT) Error() string { return "two holders at once" }

// A queue node that is down costs a RedLock nothing but a failed call per
// attempt: the attempt then asks every node, and a quorum of the others
// grants the lock.
func TestMutex_WithHub_queueNodeDown(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := redlock.New(cs, lockName(t), redlock.WithHub(pubsub.Shared(cs[0])), redlock.WithNodeTimeout(200*time.Millisecond))
	ms[0].Close()
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock with the queue node down: %v", err)
	}
	if n := held(t, cs[1:], lockName(t)); n != 2 {
		t.Errorf("held on %d of the 2 live nodes, want 2", n)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock with the queue node down: %v", err)
	}
}

// A waiter that gives up leaves the queue, so an unlock grants nothing to
// it and the next Lock takes the lock at once.
func TestMutex_WithHub_givenUp(t *testing.T) {
	ms := minis(t, 3)
	cs := miniClients(t, ms)
	ctx := context.Background()
	name := lockName(t)
	opts := []redlock.Option{redlock.WithHub(pubsub.Shared(cs[0])), redlock.WithRetryDelay(time.Hour)}
	holder := redlock.New(cs, name, opts...)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := redlock.New(miniClients(t, ms), name, opts...).Lock(short)
	cancel()
	if err == nil {
		t.Fatal("Lock of a held lock succeeded")
	}
	queue := "latchkey_lock_queue:{" + name + "}"
	if l, _ := ms[0].List(queue); len(l) != 0 {
		t.Errorf("queue after the waiter gave up: %q, want empty", l)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if held(t, cs, name) != 0 {
		t.Errorf("the unlock granted the lock to a waiter that gave up")
	}
	next := redlock.New(miniClients(t, ms), name, opts...)
	if ok, err := next.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryLock after the unlock = %v, %v; want the free lock", ok, err)
	}
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
