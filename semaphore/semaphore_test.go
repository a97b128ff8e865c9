package semaphore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

func TestSemaphore_redissonLayout(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem := semaphore.New(client(t, s), name)
	raw := s.Client(t)
	sub := raw.Subscribe(ctx, "redisson_sc:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}

	if ok, err := sem.TrySetPermits(ctx, 3); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	expectMessage(t, sub, "3")
	if err := sem.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Fatalf("key %s = %q after acquiring 2 of 3, want \"1\"", name, v)
	}
	if err := sem.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, sub, "3") // the new available count
	if ttl := raw.PTTL(ctx, name).Val(); ttl != -1*time.Millisecond && ttl != -1 {
		t.Errorf("PTTL = %v, want none", ttl)
	}
}

func expectMessage(t *testing.T, sub *redis.PubSub, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != want {
		t.Fatalf("message = %v, %v; want %q", msg, err, want)
	}
}

// Redisson's RedissonSemaphoreTest flows (§6.4), on miniredis.
func TestSemaphore_counts(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := semaphore.New(c, semName(t))
	check := func(want int64) {
		t.Helper()
		if got, err := sem.AvailablePermits(ctx); got != want || err != nil {
			t.Fatalf("AvailablePermits = %d, %v; want %d", got, err, want)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(0) // never set
	if n, err := sem.DrainPermits(ctx); n != 0 || err != nil {
		t.Fatalf("DrainPermits on a missing semaphore = %d, %v", n, err)
	}
	must(sem.Release(ctx, 1)) // release without set creates it
	check(1)
	if ok, err := sem.TrySetPermits(ctx, 15); ok || err != nil {
		t.Fatalf("TrySetPermits on an existing semaphore = %v, %v", ok, err)
	}
	must(sem.SetPermits(ctx, 10))
	must(sem.Acquire(ctx, 10))
	check(0)
	if ok, err := sem.TryAcquire(ctx, 1, 0); ok || err != nil {
		t.Fatalf("TryAcquire with none available = %v, %v", ok, err)
	}
	must(sem.AddPermits(ctx, 4))
	must(sem.Release(ctx, 10))
	check(14)
	must(sem.AddPermits(ctx, -19))
	check(-5)
	if n, err := sem.DrainPermits(ctx); n != 0 || err != nil {
		t.Fatalf("DrainPermits of -5 = %d, %v; want 0", n, err)
	}
	check(-5) // draining never creates permits
	must(sem.Release(ctx, 10))
	if n, err := sem.DrainPermits(ctx); n != 5 || err != nil {
		t.Fatalf("DrainPermits = %d, %v; want 5", n, err)
	}
	check(0)
}

func TestSemaphore_invalidPermits(t *testing.T) {
	_, c := mini(t)
	ctx := context.Background()
	sem := semaphore.New(c, semName(t))
	if err := sem.SetPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Acquire(0)":        func() error { return sem.Acquire(ctx, 0) },
		"Acquire(-1)":       func() error { return sem.Acquire(ctx, -1) },
		"TryAcquire(0)":     func() error { _, err := sem.TryAcquire(ctx, 0, time.Second); return err },
		"Release(0)":        func() error { return sem.Release(ctx, 0) },
		"Release(-2)":       func() error { return sem.Release(ctx, -2) },
		"SetPermits(-1)":    func() error { return sem.SetPermits(ctx, -1) },
		"TrySetPermits(-1)": func() error { _, err := sem.TrySetPermits(ctx, -1); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, latchkey.ErrInvalidPermits) {
			t.Errorf("%s = %v, want ErrInvalidPermits", name, err)
		}
	}
	if n, _ := sem.AvailablePermits(ctx); n != 5 {
		t.Errorf("AvailablePermits = %d after invalid calls, want 5", n)
	}
}

// 20 clients (as 20 processes would) share 5 permits, each taking 1 to 3 at
// a time: the number of permits held at once never exceeds 5. Then the same
// with 20 goroutines of one client, whose waiters share one subscription.
func TestSemaphore_noOverAdmission(t *testing.T) {
	s := server(t)
	t.Run("20 clients", func(t *testing.T) { noOverAdmission(t, s, nil) })
	t.Run("one client", func(t *testing.T) { noOverAdmission(t, s, client(t, s)) })
}

func noOverAdmission(t *testing.T, s *redistest.Server, shared *redis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	name := semName(t)
	const clients, rounds, permits = 20, 8, 5
	if err := semaphore.New(client(t, s), name).SetPermits(ctx, permits); err != nil {
		t.Fatal(err)
	}
	var (
		held, peak atomic.Int64
		mu         sync.Mutex
		waits      []time.Duration
		wg         sync.WaitGroup
		errs       = make(chan error, clients)
	)
	for range clients {
		c := shared
		if c == nil {
			c = client(t, s)
		}
		sem := semaphore.New(c, name)
		wg.Go(func() {
			for range rounds {
				n := rand.Int64N(3) + 1
				start := time.Now()
				if err := sem.Acquire(ctx, n); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				waits = append(waits, time.Since(start))
				mu.Unlock()
				h := held.Add(n)
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				held.Add(-n)
				if err := sem.Release(ctx, n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p := peak.Load(); p > permits || p < 1 {
		t.Errorf("peak permits held = %d, want 1..%d", p, permits)
	}
	if n, err := semaphore.New(client(t, s), name).AvailablePermits(ctx); n != permits || err != nil {
		t.Errorf("AvailablePermits at the end = %d, %v; want %d", n, err, permits)
	}
	if len(waits) == clients*rounds {
		slices.Sort(waits)
		t.Logf("%d acquisitions, peak held %d; acquire wait median %v, p90 %v, max %v",
			len(waits), peak.Load(), waits[len(waits)/2], waits[len(waits)*9/10], waits[len(waits)-1])
	}
}
