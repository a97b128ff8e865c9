package fairlock_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// queueInOrder queues the waiters lock[0], lock[1], ... one after another,
// each once the previous one is in the queue, behind a holder that then
// releases. Each waiter, once it has the lock, reports its index and
// releases it. queueInOrder returns the indexes in the order they acquired,
// and when each did. A nil lock is a slot taken by someone else: start(i)
// queues it. beforeRelease, if set, runs once all are queued.
func queueInOrder(t *testing.T, c redis.UniversalClient, holder *fairlock.Mutex, locks []*fairlock.Mutex,
	start func(i int), beforeRelease func()) ([]int, []time.Time) {
	t.Helper()
	ctx := testCtx(t)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		i  int
		at time.Time
	}
	got := make(chan entry, len(locks))
	errs := make(chan error, len(locks))
	var wg sync.WaitGroup
	for i, m := range locks {
		if m == nil {
			start(i)
		} else {
			wg.Go(func() {
				if err := m.Lock(ctx); err != nil {
					errs <- fmt.Errorf("waiter %d: %w", i, err)
					return
				}
				got <- entry{i, time.Now()}
				time.Sleep(time.Millisecond)
				if err := m.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("waiter %d: unlock: %w", i, err)
				}
			})
		}
		waitQueued(t, c, holder.Name(), int64(i+1))
	}
	if beforeRelease != nil {
		beforeRelease()
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(got)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var order []int
	var at []time.Time
	for e := range got {
		order = append(order, e.i)
		at = append(at, e.at)
	}
	return order, at
}

// TestStrictFIFO: 8 waiters, each on its own client, queued in a known
// order acquire in exactly that order, 20 times over.
func TestStrictFIFO(t *testing.T) {
	newClient := realServer(t)
	const waiters, rounds = 8, 20
	c := newClient()
	clients := make([]*redis.Client, waiters)
	for i := range clients {
		clients[i] = newClient()
	}
	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	for round := range rounds {
		name := lockName()
		locks := make([]*fairlock.Mutex, waiters)
		for i := range locks {
			locks[i] = fairlock.New(clients[i], name)
		}
		order, _ := queueInOrder(t, c, fairlock.New(c, name), locks, nil, nil)
		if !slices.Equal(order, want) {
			t.Fatalf("round %d: acquired in order %v, want %v", round, order, want)
		}
		if n, z := queueState(t, c, name); n != 0 || z != 0 {
			t.Fatalf("round %d: queue %d, deadlines %d left", round, n, z)
		}
	}
}

// TestKilledWaiterChild is the waiter that TestFIFOSkipsKilledWaiter kills.
func TestKilledWaiterChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("runs only as a child of TestFIFOSkipsKilledWaiter")
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("FAIRLOCK_ADDR")})
	m := fairlock.New(c, os.Getenv("FAIRLOCK_NAME"), fairlock.WithLivenessTimeout(time.Second))
	fmt.Println("WAITING")
	err := m.Lock(context.Background())
	fmt.Println("ACQUIRED", err) // never: the parent kills us first
	time.Sleep(time.Minute)
}

// TestFIFOSkipsKilledWaiter: with one of 8 queued waiters a process that
// is SIGKILLed while it waits, the other 7 still acquire in order, and the
// dead slot stalls them no longer than the liveness timeout.
func TestFIFOSkipsKilledWaiter(t *testing.T) {
	if redistest.IsChild() {
		t.Skip("not in a child")
	}
	srv := redistest.SharedServer(t)
	newClient := makerFor(t, srv.Addr())
	const waiters, liveness = 8, time.Second
	c := newClient()
	for _, dead := range []int{0, 3, 7} {
		t.Run(fmt.Sprintf("dead=%d", dead), func(t *testing.T) {
			name := lockName()
			locks := make([]*fairlock.Mutex, waiters)
			var want []int
			for i := range locks {
				if i != dead {
					locks[i] = fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(liveness))
					want = append(want, i)
				}
			}
			var child *redistest.Child
			start := func(int) {
				child = redistest.StartChild(t, "TestKilledWaiterChild",
					"FAIRLOCK_ADDR="+srv.Addr(), "FAIRLOCK_NAME="+name)
				child.WaitLine(t, "WAITING", 30*time.Second)
			}
			var killed time.Time
			kill := func() {
				child.Kill()
				killed = time.Now()
			}
			holder := fairlock.New(c, name, fairlock.WithLivenessTimeout(liveness))
			order, at := queueInOrder(t, c, holder, locks, start, kill)
			if !slices.Equal(order, want) {
				t.Fatalf("acquired in order %v, want %v", order, want)
			}
			// The first waiter behind the dead slot gets the lock within
			// the liveness timeout of the kill (plus scheduling slack); behind
			// a dead last waiter, that is a newcomer.
			late := fairlock.New(c, name, fairlock.WithLivenessTimeout(liveness))
			if err := late.Lock(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			order, at = append(order, waiters), append(at, time.Now())
			if err := late.Unlock(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			var behind time.Time
			for k, i := range order {
				if i > dead {
					behind = at[k]
					break
				}
			}
			stall := behind.Sub(killed)
			t.Logf("dead waiter %d skipped %v after it was killed (liveness timeout %v)", dead, stall.Round(time.Millisecond), liveness)
			if stall > liveness+2*time.Second {
				t.Errorf("the dead slot stalled the queue for %v", stall)
			}
			if n, z := queueState(t, c, name); n != 0 || z != 0 {
				t.Fatalf("queue %d, deadlines %d left", n, z)
			}
		})
	}
}

// TestSaturation: 8 clients take turns as fast as they can, each holding
// the lock for 1ms. FIFO bounds every wait by about 8 holds and handoffs.
func TestSaturation(t *testing.T) {
	newClient := realServer(t)
	const clients, rounds, hold = 8, 25, time.Millisecond
	ctx, name := testCtx(t), lockName()
	var (
		inside, violations atomic.Int32
		mu                 sync.Mutex
		waits              []time.Duration
		wg                 sync.WaitGroup
		errs               = make(chan error, clients)
	)
	start := time.Now()
	for range clients {
		m := fairlock.New(newClient(), name)
		wg.Go(func() {
			for range rounds {
				t0 := time.Now()
				if err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				w := time.Since(t0)
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				time.Sleep(hold)
				inside.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				waits = append(waits, w)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d acquisitions found another holder inside", v)
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	n := len(waits)
	t.Logf("%d clients x %d rounds, hold %v: %d acquisitions in %v (%.0f/s); wait median %v, p99 %v, max %v",
		clients, rounds, hold, n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(),
		waits[n/2].Round(time.Microsecond), waits[n*99/100].Round(time.Microsecond), waits[n-1].Round(time.Microsecond))
	if waits[n-1] > 5*time.Second {
		t.Fatalf("a waiter waited %v", waits[n-1])
	}
}
