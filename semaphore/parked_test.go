package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// Permits granted to a waiter that gave up are never parked: they are back
// in the count that every reader sees, the plain integer a Redisson client
// reads included. Before, they came back only with the next call on the
// semaphore, whoever made it.

// stoppedWaiter queues, on the semaphore name, a waiter for 1 permit whose
// client hears its letters and never comes for a grant: a process that
// stopped, or a call that left without a word.
func stoppedWaiter(t *testing.T, s *redistest.Server, name string) {
	t.Helper()
	ctx := context.Background()
	c := s.Client(t)
	sub := c.Subscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:stopped")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	entry := "stopped/1/stopped-call"
	c.RPush(ctx, queueKey(name), entry)
	c.ZAdd(ctx, "latchkey_semaphore_timeout:{"+name+"}", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
}

// countWithin waits up to d for the plain count of name to be want.
func countWithin(t *testing.T, c *redis.Client, name string, want int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for locktest.Count(t, c, name) != want {
		if time.Now().After(deadline) {
			t.Fatalf("the count a Redisson client reads is %d, %v on; want %d", locktest.Count(t, c, name), d, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The client that granted a permit to a waiter that never takes it gives
// it back once the grace is over, with nobody else calling.
func TestParked_granterGivesBackAfterTheGrace(t *testing.T) {
	s := server(t)
	name := semName(t)
	raw := s.Client(t)
	stoppedWaiter(t, s, name)
	if err := semaphore.New(client(t, s), name).Release(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if n := locktest.Count(t, raw, name); n != 0 {
		t.Fatalf("count %d after the release, want 0: the permit is granted", n)
	}
	countWithin(t, raw, name, 1, handoff.Grace+time.Second)
}

// AvailablePermits counts a permit whose grace is over, even when no
// client of the semaphore lives to give it back.
func TestParked_availableCountsALapsedGrant(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	stoppedWaiter(t, s, name)
	granter := s.Client(t) // it stops at once: nobody gives the permit back
	if err := semaphore.New(granter, name).Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_ = granter.Close()
	time.Sleep(handoff.Grace + 50*time.Millisecond)
	if n, err := semaphore.New(client(t, s), name).AvailablePermits(ctx); n != 1 || err != nil {
		t.Fatalf("AvailablePermits = %d, %v once the grant's grace is over; want 1", n, err)
	}
}

// Twelve waiters of as many clients on 4 permits, granted as their waits
// are cancelled and every client is closed at once: the permits are all
// back as soon as the clients are closed. Rounds on fresh names make the
// race likely: before, about one round in three left permits parked.
func TestParked_closeHandsBackGrants(t *testing.T) {
	locktest.ClosingWaiters(t, server(t), semName(t), locktest.Semaphore{
		Fill: func(ctx context.Context, c *redis.Client, name string) (func(context.Context) error, error) {
			s := semaphore.New(c, name)
			if err := s.AddPermits(ctx, 4); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, 4) }, s.Acquire(ctx, 4)
		},
		Acquire: func(ctx context.Context, c *redis.Client, name string) error {
			return semaphore.New(c, name).Acquire(ctx, 1)
		},
	}, 10)
}
