package semaphore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// A grant whose letter is heard but never read (its waiter left without a
// word, and its client still listens) is taken back after the grace: the
// next waiter, told that it is next, gets the permit then, not sooner.
func TestGrant_unreadLetter(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	listener := s.Client(t)
	sub := listener.Subscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:gone")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	gone := "gone/1/lost-call"
	raw.RPush(ctx, queueKey(name), gone)
	raw.ZAdd(ctx, "latchkey_semaphore_timeout:{"+name+"}", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: gone})
	next := semaphore.New(client(t, s), name)
	done := make(chan time.Time, 1)
	go func() {
		if next.Acquire(ctx, 1) == nil {
			done <- time.Now()
		}
		close(done)
	}()
	waitQueue(t, raw, name, 2)
	time.Sleep(20 * time.Millisecond)
	released := time.Now()
	if err := semaphore.New(client(t, s), name).Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || !strings.HasPrefix(msg.Payload, "@lost-call 1 ") {
		t.Fatalf("letter to the gone waiter = %v, %v", msg, err)
	}
	select {
	case at, ok := <-done:
		if !ok {
			t.Fatal("the next waiter's Acquire failed")
		}
		d := at.Sub(released)
		t.Logf("the next waiter acquired %v after the release granted the permit to a waiter that never read its letter", d)
		if d < handoff.Grace-10*time.Millisecond || d > handoff.Grace+wait2s {
			t.Errorf("the next waiter acquired %v after the release, want about the grace (%v)", d, handoff.Grace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never acquired")
	}
	if v := raw.Get(ctx, name).Val(); v != "0" {
		t.Errorf("count while the next waiter holds = %q, want \"0\"", v)
	}
	// The gone waiter's grant was taken back, leaving nothing behind.
	if err := next.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := raw.ZCard(ctx, grantKey(name)).Val(); n != 0 {
		t.Errorf("%d grants left after the grace", n)
	}
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Errorf("count at the end = %q, want \"1\"", v)
	}
}

// A waiter that gives up while a grant is on its way gives the permit
// back: whatever the timing of a cancellation against the release, the
// permit is never left to a waiter whose Acquire failed, and the next
// waiter gets it.
func TestGrant_cancelAroundRelease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	a := semaphore.New(client(t, s), name)
	b := semaphore.New(client(t, s), name)
	c := semaphore.New(client(t, s), name)
	if err := a.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	granted, gaveUp := 0, 0
	for range 40 {
		if err := a.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		bctx, cancel := context.WithCancel(ctx)
		bdone := make(chan error, 1)
		go func() { bdone <- b.Acquire(bctx, 1) }()
		waitQueue(t, raw, name, 1)
		cdone := make(chan error, 1)
		go func() { cdone <- c.Acquire(ctx, 1) }()
		waitQueue(t, raw, name, 2)
		// Cancel b around the release: before, during or after its grant.
		delay := time.Duration(rng.IntN(400)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			cancel()
		}()
		if err := a.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		berr := <-bdone
		cancel()
		if berr == nil {
			granted++
			select {
			case err := <-cdone:
				t.Fatalf("c served (%v) while b holds the only permit", err)
			default:
			}
			if err := b.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
		} else {
			gaveUp++
			if !errors.Is(berr, context.Canceled) {
				t.Fatalf("b's Acquire = %v, want context.Canceled", berr)
			}
		}
		select {
		case err := <-cdone:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(handoff.Grace + wait2s): // a give-back cut off costs the grace
			t.Fatalf("c not served within the grace and 2s (b granted %v)", berr == nil)
		}
		if v := raw.Get(ctx, name).Val(); v != "0" {
			t.Fatalf("count while c holds = %q, want \"0\"", v)
		}
		if err := c.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("b acquired %d times and gave up %d times", granted, gaveUp)
	if gaveUp == 0 {
		t.Error("b never gave up: the test did not race cancellation against the grant")
	}
	if v := raw.Get(ctx, name).Val(); v != "1" {
		t.Errorf("count at the end = %q, want \"1\"", v)
	}
}

// Waiters that give up while grants are on their way (cancellations timed
// at random around releases, on many clients) neither lose permits nor
// count them twice: no more holders than permits at any time, and the
// count is whole at the end.
func TestGrant_givenUp(t *testing.T) {
	s := server(t)
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	name := semName(t)
	raw := s.Client(t)
	const clients, permits, rounds = 6, 2, 150
	if err := semaphore.New(client(t, s), name).SetPermits(ctx, permits); err != nil {
		t.Fatal(err)
	}
	var (
		held, peak   atomic.Int64
		gaveUp, took atomic.Int64
		wg           sync.WaitGroup
		errs         = make(chan error, clients)
	)
	for i := range clients {
		sem := semaphore.New(client(t, s), name)
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		wg.Go(func() {
			for range rounds {
				// Most calls give up within 3ms, around the grants; one in
				// four waits long enough to take a permit on a loaded machine.
				wait := time.Duration(rng.IntN(3000)) * time.Microsecond
				if rng.IntN(4) == 0 {
					wait = 2 * time.Second
				}
				actx, cancel := context.WithTimeout(ctx, wait)
				err := sem.Acquire(actx, 1)
				cancel()
				switch {
				case err == nil:
					took.Add(1)
					h := held.Add(1)
					for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
					}
					time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
					held.Add(-1)
					if err := sem.Release(ctx, 1); err != nil {
						errs <- err
						return
					}
				case errors.Is(err, context.DeadlineExceeded):
					gaveUp.Add(1)
				default:
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d acquisitions, %d given up; peak held %d", took.Load(), gaveUp.Load(), peak.Load())
	if p := peak.Load(); p > permits {
		t.Errorf("peak permits held = %d, want at most %d", p, permits)
	}
	if gaveUp.Load() == 0 || took.Load() == 0 {
		t.Error("the test did not race cancellation against grants")
	}
	// Grants of calls that gave up are given back by their dequeue; any
	// left (a give-back cut off) return after the grace.
	deadline := time.Now().Add(handoff.Grace + wait2s)
	for {
		v, err := semaphore.New(client(t, s), name).AvailablePermits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v == permits && raw.LLen(ctx, queueKey(name)).Val() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("count %d and %d queued at the end, want %d and none", v, raw.LLen(ctx, queueKey(name)).Val(), permits)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := raw.ZCount(ctx, grantKey(name), "0", "+inf").Val(); n != 0 {
		t.Errorf("%d grants outstanding at the end", n)
	}
}
