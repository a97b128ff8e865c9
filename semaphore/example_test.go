package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// At most three workers, in any number of processes, call the rate-limited
// service at once.
func Example() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := semaphore.New(rdb, "service-slots")
	if _, err := sem.TrySetPermits(ctx, 3); err != nil { // once, by whoever comes first
		panic(err)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := sem.Acquire(ctx, 1); err != nil {
				panic(err)
			}
			defer sem.Release(context.WithoutCancel(ctx), 1)
			// ... call the service ...
		})
	}
	wg.Wait()
	n, _ := sem.AvailablePermits(ctx)
	fmt.Println("available:", n)
	// Output: available: 3
}

// TryAcquire gives up when the permits do not come within its wait, and
// leaves the semaphore as it was.
func ExampleSemaphore_TryAcquire() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := semaphore.New(rdb, "batch-slots")
	_ = sem.SetPermits(ctx, 2)
	ok, err := sem.TryAcquire(ctx, 3, 50*time.Millisecond)
	fmt.Println(ok, err)
	ok, err = sem.TryAcquire(ctx, 2, 0)
	fmt.Println(ok, err)
	// Output:
	// false <nil>
	// true <nil>
}

// A negative AddPermits shrinks the semaphore even while its permits are
// out: the count goes below zero, and new Acquire calls wait until enough
// releases bring it back above.
func ExampleSemaphore_AddPermits() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := semaphore.New(rdb, "db-connections")
	_ = sem.SetPermits(ctx, 10)
	_ = sem.Acquire(ctx, 8)
	_ = sem.AddPermits(ctx, -5) // capacity 10 -> 5
	n, _ := sem.AvailablePermits(ctx)
	fmt.Println("available:", n)
	_ = sem.Release(ctx, 8)
	n, _ = sem.AvailablePermits(ctx)
	fmt.Println("available:", n)
	// Output:
	// available: -3
	// available: 5
}

// Delete ends a semaphore for good: a worker blocked in Acquire returns an
// error matching latchkey.ErrDeleted instead of waiting for permits that
// will never come.
func ExampleSemaphore_Delete() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	sem := semaphore.New(rdb, "import-slots")
	_ = sem.SetPermits(ctx, 0)
	worker := make(chan error)
	go func() { worker <- sem.Acquire(ctx, 1) }()
	// Only so that the output is always the same: wait until the worker
	// is in the semaphore's queue (see the package doc for its key).
	for rdb.LLen(ctx, "latchkey_semaphore_queue:{import-slots}").Val() == 0 {
		time.Sleep(time.Millisecond)
	}
	existed, _ := sem.Delete(ctx)
	fmt.Println("existed:", existed)
	fmt.Println("worker deleted:", errors.Is(<-worker, latchkey.ErrDeleted))
	// Output:
	// existed: true
	// worker deleted: true
}
