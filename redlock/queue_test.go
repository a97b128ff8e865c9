package redlock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// With a Hub, waiters of every client queue on the Hub's node and an
// unlock wakes the first of them alone: the others send nothing until
// their turn, and the waiters get the lock in the order they came.
func TestMutex_WithHub_queue(t *testing.T) {
	ms := minis(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := lockName(t)
	open := func(sent *locktest.Commands) *redlock.Mutex {
		cs := miniClients(t, ms)
		for _, c := range cs {
			c.(*redis.Client).AddHook(sent)
		}
		return redlock.New(cs, name, redlock.WithHub(pubsub.Shared(cs[0])), redlock.WithRetryDelay(time.Hour))
	}
	var holderSent locktest.Commands
	holder := open(&holderSent)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 4
	sent := make([]locktest.Commands, n)
	order := make(chan int, n)
	errs := make(chan error, n)
	var inside atomic.Int32
	ws := make([]*redlock.Mutex, n)
	for i := range n {
		ws[i] = open(&sent[i])
		go func() {
			if err := ws[i].Lock(ctx); err != nil {
				errs <- err
				return
			}
			if inside.Add(1) > 1 {
				errs <- errOverlap
			}
			order <- i
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			errs <- ws[i].Unlock(context.WithoutCancel(ctx))
		}()
		// Queued before the next comes.
		queue := "latchkey_lock_queue:{" + name + "}"
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if l, _ := ms[0].List(queue); len(l) == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d not queued within 5s", i)
			}
		}
	}
	// Each waiter looks again once subscribed: wait until all are quiet.
	before := make([]int64, n)
	for settled := time.Now().Add(5 * time.Second); time.Now().Before(settled); {
		quiet := true
		for i := range n {
			if v := sent[i].N(); v != before[i] {
				before[i], quiet = v, false
			}
		}
		if quiet {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	first := <-order
	if first != 0 {
		t.Errorf("waiter %d got the lock first, want 0", first)
	}
	for i := 1; i < n; i++ {
		if got := sent[i].N() - before[i]; got != 0 {
			t.Errorf("waiter %d sent %d commands before its turn, want 0: the unlock woke it", i, got)
		}
	}
	for i := 1; i < n; i++ {
		if w := <-order; w != i {
			t.Errorf("waiter %d got the lock in turn %d, want %d", w, i, w)
		}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
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
