package lease_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// The watchdog renews a Redisson hash lock every third of its lease, and
// reports the hold lost once the lock is found gone.
func Example() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	watchdog := lease.New(client, rt.Renewals(client))
	defer watchdog.Close()
	ctx := context.Background()

	const owner = "6a3f1c52-0000-4000-8000-000000000000:1"
	client.HSet(ctx, "job", owner, 1)
	client.PExpire(ctx, "job", 300*time.Millisecond)
	lost := make(chan error, 1)
	watchdog.Add(&lease.Hold{
		Kind:  lease.HashLock,
		Keys:  []string{"job"},
		Owner: owner,
		Args:  func(o string) []any { return []any{o} },
		Lease: 300 * time.Millisecond,
		Lost:  func(err error) { lost <- err },
	}, time.Now())

	mr.FastForward(250 * time.Millisecond) // miniredis time: 50ms left
	for mr.TTL("job") != 300*time.Millisecond {
		time.Sleep(time.Millisecond) // until the renewal at 100ms
	}
	fmt.Println("renewed:", mr.TTL("job"))

	client.Del(ctx, "job")
	fmt.Println("lost:", errors.Is(<-lost, lockerr.ErrLost))
	// Output:
	// renewed: 300ms
	// lost: true
}
