package permitsemaphore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// Permits granted to a waiter that never takes them are back in the count
// that every reader sees, the plain integer a Redisson client reads
// included, within the grace and a second, and Close hands back its
// waiters' grants. Before, they came back only with the next call on the
// semaphore, whoever made it.

// The client that granted a permit to a waiter that never takes it gives
// it back once the grace is over, with nobody else calling.
func TestParked_granterGivesBackAfterTheGrace(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	sub := raw.Subscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:stopped")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// A waiter for 1 permit whose client hears its letters and never
	// comes for a grant: a process that stopped.
	entry := "stopped/1/" + strings.Repeat("ab", 16)
	raw.RPush(ctx, "latchkey_semaphore_queue:{"+name+"}", entry)
	raw.ZAdd(ctx, "latchkey_semaphore_timeout:{"+name+"}", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
	sem := permitsemaphore.New(client(t, s), name)
	if err := sem.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := locktest.Count(t, raw, name); n != 0 {
		t.Fatalf("count %d once set, want 0: the permit is granted", n)
	}
	deadline := time.Now().Add(handoff.Grace + time.Second)
	for locktest.Count(t, raw, name) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the count a Redisson client reads is %d a second past the grace, want 1", locktest.Count(t, raw, name))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Twelve waiters of as many clients on 4 permits, granted as their waits
// are cancelled and every client is closed at once: the permits are all
// back as soon as the clients are closed (before, 2 runs in 8 left some
// parked).
func TestParked_closeHandsBackGrants(t *testing.T) {
	locktest.ClosingWaiters(t, server(t), semName(t), locktest.Semaphore{
		Fill: func(ctx context.Context, c *redis.Client, name string) (func(context.Context) error, error) {
			s := permitsemaphore.New(c, name)
			if err := s.SetPermits(ctx, 4); err != nil {
				return nil, err
			}
			ps, err := s.AcquireN(ctx, 4, permitsemaphore.Forever)
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID()
			}
			return func(ctx context.Context) error { return s.ReleaseAll(ctx, ids...) }, err
		},
		Acquire: func(ctx context.Context, c *redis.Client, name string) error {
			_, err := permitsemaphore.New(c, name).Acquire(ctx, permitsemaphore.Forever)
			return err
		},
	}, 10)
}
