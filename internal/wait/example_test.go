package wait_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A blocking call: the first attempts fail, and a release published on the
// channel wakes the waiter, whose next attempt succeeds.
func ExampleUntil() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	hub := notify.New(client)
	defer hub.Close()
	ctx := context.Background()

	var released atomic.Bool
	go func() { // the holder releases once the waiter listens
		for hub.Stats().Waiters == 0 {
			time.Sleep(time.Millisecond)
		}
		released.Store(true)
		client.Publish(ctx, "redisson_lock__channel:{job}", "0")
	}()

	ok, err := wait.Until(ctx, -1, wait.Spec{
		Hub:  hub,
		Wake: wait.Channel{Name: "redisson_lock__channel:{job}", Policy: notify.WakeOne},
		Call: wait.Attempt(func(ctx context.Context) (bool, time.Duration, error) {
			return released.Load(), -1, nil // -1: only a message tells when to retry
		}),
	})
	fmt.Println(ok, err)
	// Output: true <nil>
}

// A TryX whose budget runs out returns (false, nil), after undoing what
// its attempts left behind.
func ExampleUntil_budget() {
	ok, err := wait.Until(context.Background(), 20*time.Millisecond, wait.Spec{
		Call: &call{
			attempt: func(ctx context.Context) (bool, time.Duration, error) {
				return false, 5 * time.Millisecond, nil // held: retry within 5ms
			},
			abandon: func(ctx context.Context) { fmt.Println("abandoned") },
		},
	})
	fmt.Println(ok, err)
	// Output:
	// abandoned
	// false <nil>
}
