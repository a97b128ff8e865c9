package permitsemaphore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// A holder process is killed while it holds 2 of 3 permits with a lease:
// nobody releases them, nobody publishes, yet a waiter for all 3 that was
// blocked before the kill gets them as soon as their lease ends.
func TestSemaphore_holderKilled(t *testing.T) {
	if redistest.IsChild() {
		holderChild(t)
		return
	}
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	sem, h := watched(t, s, name)
	if err := sem.SetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	const lease = 1500 * time.Millisecond
	child := redistest.StartChild(t, "TestSemaphore_holderKilled",
		"PES_ADDR="+s.Addr(), "PES_NAME="+name, "PES_LEASE="+lease.String())
	ids := strings.Fields(strings.TrimPrefix(child.WaitLine(t, "ACQUIRED", 10*time.Second), "ACQUIRED"))
	if len(ids) != 2 {
		t.Fatalf("child printed ids %q, want 2", ids)
	}
	raw := s.Client(t)
	end, err := raw.ZRangeWithScores(ctx, "{"+name+"}:timeout", -1, -1).Result()
	if err != nil || len(end) != 1 {
		t.Fatalf("timeout zset: %v, %v", end, err)
	}
	leaseEnd := time.UnixMilli(int64(end[0].Score))

	// Every message on the channel from here on is counted.
	mon := raw.Subscribe(ctx, "redisson_sc:{"+name+"}")
	defer mon.Close()
	if _, err := mon.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	var messages atomic.Int64
	go func() {
		for range mon.Channel() {
			messages.Add(1)
		}
	}()

	type result struct {
		ps  []*permitsemaphore.Permit
		at  time.Time
		err error
	}
	done := make(chan result, 1)
	go func() {
		ps, err := sem.AcquireN(ctx, 3, permitsemaphore.Lease(time.Minute))
		done <- result{ps, time.Now(), err}
	}()
	waitWaiters(t, h, 1)
	child.Kill()
	killed := time.Now()

	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.at.Before(leaseEnd) {
			t.Fatalf("acquired %v before the dead holder's lease ended", leaseEnd.Sub(r.at))
		}
		t.Logf("killed holder's permits taken %v after the kill, %v after their lease ended",
			r.at.Sub(killed), r.at.Sub(leaseEnd))
		if late := r.at.Sub(leaseEnd); late > 2*time.Second {
			t.Errorf("waiter took %v past the lease end: it was not bounded by the lease", late)
		}
	case <-time.After(time.Until(leaseEnd) + 5*time.Second):
		t.Fatal("the killed holder's permits never came back")
	}
	time.Sleep(100 * time.Millisecond) // let any message arrive
	if n := messages.Load(); n != 0 {
		t.Errorf("%d messages published; the waiter must need none", n)
	}
	for _, id := range ids {
		if err := sem.Release(ctx, id); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("Release(dead holder's %s) = %v, want ErrNotHeld", id, err)
		}
	}
	if av, ac := must2(sem.AvailablePermits(ctx)), must2(sem.AcquiredPermits(ctx)); av != 0 || ac != 3 {
		t.Errorf("available %d, acquired %d; want 0, 3", av, ac)
	}
}

// holderChild acquires 2 permits, prints their ids and waits to be killed.
func holderChild(t *testing.T) {
	lease, err := time.ParseDuration(os.Getenv("PES_LEASE"))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("PES_ADDR")})
	sem := permitsemaphore.New(c, os.Getenv("PES_NAME"))
	ps, err := sem.AcquireN(context.Background(), 2, permitsemaphore.Lease(lease))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ACQUIRED", ps[0].ID(), ps[1].ID())
	time.Sleep(time.Minute)
}

// Clients acquire, extend and release permits, and some "crash": they drop
// their permits, whose short leases then end. Through it all, available +
// acquired is the total; after quiescence every permit is back.
func TestSemaphore_totalInvariant(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	name := semName(t)
	const clients, rounds, total = 8, 12, 4
	if err := permitsemaphore.New(client(t, s), name).SetPermits(ctx, total); err != nil {
		t.Fatal(err)
	}
	var (
		wg, checker sync.WaitGroup
		stop        = make(chan struct{})
		errs        = make(chan error, clients+1)
		held, peak  atomic.Int64 // permits of live holders
		mu          sync.Mutex
		waits       []time.Duration
		checks      atomic.Int64
	)
	watch := permitsemaphore.New(client(t, s), name)
	checker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n, err := watch.Permits(ctx); err != nil || n != total {
				errs <- fmt.Errorf("Permits = %d, %v during the run; want %d", n, err, total)
				return
			}
			checks.Add(1)
			time.Sleep(time.Millisecond)
		}
	})
	for range clients {
		sem := permitsemaphore.New(client(t, s), name)
		wg.Go(func() {
			for range rounds {
				n := rand.IntN(2) + 1
				crash := rand.IntN(4) == 0
				lease := 10 * time.Second
				if crash {
					lease = 150 * time.Millisecond
				}
				start := time.Now()
				ps, err := sem.AcquireN(ctx, n, permitsemaphore.Lease(lease))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				waits = append(waits, time.Since(start))
				mu.Unlock()
				if crash {
					continue // the permits come back when their lease ends
				}
				h := held.Add(int64(n))
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				if rand.IntN(2) == 0 {
					if err := ps[0].Extend(ctx, permitsemaphore.Lease(5*time.Second)); err != nil {
						errs <- err
						return
					}
				}
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				held.Add(-int64(n))
				ids := make([]string, n)
				for i, p := range ps {
					ids[i] = p.ID()
				}
				if err := sem.ReleaseAll(ctx, ids...); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the last crashed permits' leases end
	close(stop)
	checker.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p := peak.Load(); p > total {
		t.Errorf("peak permits held by live holders = %d, want at most %d", p, total)
	}
	av, err1 := watch.AvailablePermits(ctx)
	ac, err2 := watch.AcquiredPermits(ctx)
	if err1 != nil || err2 != nil || av != total || ac != 0 {
		t.Errorf("after quiescence available %d, acquired %d (%v, %v); want %d, 0", av, ac, err1, err2, total)
	}
	slices.Sort(waits)
	if len(waits) > 0 {
		t.Logf("%d acquisitions, %d invariant checks; acquire wait median %v, p90 %v, max %v",
			len(waits), checks.Load(), waits[len(waits)/2], waits[len(waits)*9/10], waits[len(waits)-1])
	}
}
