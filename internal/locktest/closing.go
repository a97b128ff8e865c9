package locktest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A Semaphore is how ClosingWaiters uses one kind of semaphore.
type Semaphore struct {
	// Fill sets 4 permits of the semaphore name through c and takes them
	// all; it returns how to give them back.
	Fill func(ctx context.Context, c *redis.Client, name string) (release func(context.Context) error, err error)
	// Acquire takes one permit of name through c.
	Acquire func(ctx context.Context, c *redis.Client, name string) error
}

// ClosingWaiters checks that permits granted to waiters that give up are
// never parked: in each of rounds, on a fresh name and with fresh
// clients, it runs CloseAtOnce with twelve waiters, and once every client
// closed, the count a Redisson client reads must be 4 less what the
// waiters that got a permit hold.
func ClosingWaiters(t *testing.T, s *redistest.Server, name string, sem Semaphore, rounds int) {
	t.Helper()
	raw := s.Client(t)
	for round := range rounds {
		name := name + ":" + strconv.Itoa(round)
		waiters := make([]*redis.Client, 12)
		for i := range waiters {
			waiters[i] = s.Client(t)
		}
		got := CloseAtOnce(t, raw, s.Client(t), waiters, name, sem, time.Duration(round%4)*time.Millisecond)
		v, err := raw.Get(context.Background(), name).Result()
		if n, perr := strconv.Atoi(v); err != nil || perr != nil || n != 4-got {
			t.Errorf("round %d: %d waiters acquired, and once every client closed the count is %q (%v), want %d", round, got, v, err, 4-got)
		}
	}
}

// CloseAtOnce has holder fill the semaphore name with 4 permits and take
// them, and each of waiters wait for one; the holder gives them back as
// the waits are cancelled, lag after the release was sent, and then every
// client is closed at once (latchkey.Close, then its own Close), as
// processes that end do. It returns how many waiters got a permit, which
// they still hold. raw, a client that nothing closes, watches the queue.
func CloseAtOnce(t testing.TB, raw, holder *redis.Client, waiters []*redis.Client, name string, sem Semaphore, lag time.Duration) int {
	t.Helper()
	ctx := context.Background()
	release, err := sem.Fill(ctx, holder, name)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, len(waiters))
	for _, c := range waiters {
		go func() { done <- sem.Acquire(wctx, c, name) }()
	}
	queue := "latchkey_semaphore_queue:{" + name + "}"
	deadline := time.Now().Add(10 * time.Second)
	for raw.LLen(ctx, queue).Val() != int64(len(waiters)) {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters queued, want %d", raw.LLen(ctx, queue).Val(), len(waiters))
		}
		time.Sleep(2 * time.Millisecond)
	}
	released := make(chan error, 1)
	go func() { released <- release(ctx) }()
	time.Sleep(lag)
	cancel()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	got := 0
	for range waiters {
		err := <-done
		switch {
		case err == nil:
			got++
		case !errors.Is(err, context.Canceled):
			t.Fatalf("Acquire = %v", err)
		}
	}
	var closing sync.WaitGroup
	for _, c := range append([]*redis.Client{holder}, waiters...) {
		closing.Go(func() {
			_ = latchkey.Close(c)
			_ = c.Close()
		})
	}
	closing.Wait()
	return got
}

// Count returns the count of the semaphore name that a Redisson client
// reads: the plain integer under its name, which must be one.
func Count(t testing.TB, c *redis.Client, name string) int64 {
	t.Helper()
	v, err := c.Get(context.Background(), name).Result()
	n, perr := strconv.ParseInt(v, 10, 64)
	if err != nil || perr != nil {
		t.Fatalf("GET %s = %q, %v", name, v, err)
	}
	return n
}
