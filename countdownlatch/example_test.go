package countdownlatch_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/redis/go-redis/v9"
)

// A coordinator waits for three workers, which may run in other processes,
// to finish their part.
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

	latch := countdownlatch.New(rdb, "report:parts-ready")
	if _, err := latch.TrySetCount(ctx, 3); err != nil {
		panic(err)
	}
	var workers sync.WaitGroup
	for range 3 {
		workers.Go(func() {
			// A worker needs only the latch's name.
			w := countdownlatch.New(rdb, "report:parts-ready")
			if err := w.CountDown(ctx); err != nil {
				panic(err)
			}
		})
	}
	if err := latch.Wait(ctx); err != nil {
		panic(err)
	}
	n, _ := latch.Count(ctx)
	fmt.Println("all parts ready; count", n)
	workers.Wait() // a CountDown's reply may come after the latch opened
	// Output: all parts ready; count 0
}

// TryWait gives up after a while, reporting false without an error.
func ExampleLatch_TryWait() {
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

	latch := countdownlatch.New(rdb, "migration:done")
	if _, err := latch.TrySetCount(ctx, 1); err != nil {
		panic(err)
	}
	ok, err := latch.TryWait(ctx, 50*time.Millisecond)
	fmt.Println("open before the count-down:", ok, err)

	if err := latch.CountDown(ctx); err != nil {
		panic(err)
	}
	ok, err = latch.TryWait(ctx, 50*time.Millisecond)
	fmt.Println("open after the count-down:", ok, err)
	// Output:
	// open before the count-down: false <nil>
	// open after the count-down: true <nil>
}

// TrySetCount starts a latch only if it is not already running: a second
// coordinator finds it set, and a finished latch can be started again.
func ExampleLatch_TrySetCount() {
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

	latch := countdownlatch.New(rdb, "batch:42")
	first, _ := latch.TrySetCount(ctx, 2)
	second, _ := latch.TrySetCount(ctx, 5)
	n, _ := latch.Count(ctx)
	fmt.Println(first, second, n)

	_ = latch.CountDown(ctx)
	_ = latch.CountDown(ctx)
	_ = latch.CountDown(ctx) // at zero: does nothing
	again, _ := latch.TrySetCount(ctx, 1)
	fmt.Println(again)
	// Output:
	// true false 2
	// true
}

// Deleting a latch releases everyone waiting on it, as if it had counted
// down to zero.
func ExampleLatch_Delete() {
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

	latch := countdownlatch.New(rdb, "shutdown")
	if _, err := latch.TrySetCount(ctx, 10); err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := countdownlatch.New(rdb, "shutdown").Wait(ctx); err != nil {
				panic(err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let the waiters block (not needed for correctness)
	deleted, _ := latch.Delete(ctx)
	wg.Wait()
	fmt.Println("deleted:", deleted, "- every waiter released")
	// Output: deleted: true - every waiter released
}
