package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// A Mutex guards a resource shared by several processes, as a sync.Mutex
// guards one shared by goroutines.
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

	m := mutex.New(rdb, "inventory:sku-42")
	var last int64 // what a store guarded by fencing tokens remembers
	for range 2 {
		if err := m.Lock(ctx); err != nil {
			panic(err)
		}
		// A store that refuses writes with a token below the last it saw
		// refuses a holder that lost the lock without knowing it.
		fmt.Println("updating stock; token above the last one:", m.Token() > last)
		last = m.Token()
		if err := m.Unlock(ctx); err != nil {
			panic(err)
		}
	}
	// Output:
	// updating stock; token above the last one: true
	// updating stock; token above the last one: true
}

// An owner carried by the context makes the lock reentrant, like a Java
// thread holding a Redisson RLock.
func ExampleMutex_Lock_reentrant() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	ctx := latchkey.WithOwner(context.Background())
	m := mutex.New(rdb, "report")
	_ = m.Lock(ctx)
	_ = m.Lock(ctx) // re-entered, does not wait
	n, _ := m.HoldCount(ctx)
	fmt.Println("holds:", n)
	_ = m.Unlock(ctx)
	_ = m.Unlock(ctx)
	fmt.Println(errors.Is(m.Unlock(ctx), latchkey.ErrNotHeld))
	// Output:
	// holds: 2
	// true
}

// TryLock gives up after a bounded wait without an error.
func ExampleMutex_TryLock() {
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

	holder := mutex.New(rdb, "nightly-job")
	_ = holder.Lock(ctx)
	other := mutex.New(rdb, "nightly-job")
	ok, err := other.TryLock(ctx, 10*time.Millisecond)
	fmt.Println(ok, err)
	_ = holder.Unlock(ctx)
	ok, err = other.TryLock(ctx, 0)
	fmt.Println(ok, err)
	_ = other.Unlock(ctx)
	// Output:
	// false <nil>
	// true <nil>
}

// Done reports a hold that ended without Unlock, here by a fixed lease.
func ExampleMutex_Done() {
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

	m := mutex.New(rdb, "short-task", mutex.WithLease(20*time.Millisecond))
	_ = m.Lock(ctx)
	<-m.Done() // the work outlived the lease
	fmt.Println(errors.Is(m.Err(), latchkey.ErrLost))
	fmt.Println(errors.Is(m.Unlock(ctx), latchkey.ErrNotHeld))
	// Output:
	// true
	// true
}

// A task under a fixed lease extends it while it works, and checks, right
// before each write, that the hold is still known valid.
func ExampleMutex_Extend() {
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

	m := mutex.New(rdb, "nightly-report", mutex.WithLease(10*time.Second))
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	defer m.Unlock(ctx)
	for step := range 3 {
		if err := m.Extend(ctx, 10*time.Second); err != nil {
			fmt.Println("lock lost, stopping:", errors.Is(err, latchkey.ErrNotHeld))
			return
		}
		if time.Until(m.Deadline()) < time.Second {
			return // too little left to finish a step safely
		}
		fmt.Println("step", step, "written with token", m.Token() > 0)
	}
	// Output:
	// step 0 written with token true
	// step 1 written with token true
	// step 2 written with token true
}

// Locker adapts a Mutex to sync.Locker, for sync.Cond and other code
// written against it.
func ExampleMutex_Locker() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	var l = mutex.New(rdb, "config").Locker()
	l.Lock()
	fmt.Println("locked")
	l.Unlock()
	// Output: locked
}

// Delete clears every key of a lock nobody holds, and leaves a held one
// alone.
func ExampleMutex_Delete() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb)
	ctx := context.Background()

	m := mutex.New(rdb, "retired-job")
	_ = m.Lock(ctx)
	_, err = m.Delete(ctx)
	fmt.Println("held:", errors.Is(err, latchkey.ErrHeld))
	_ = m.Unlock(ctx)
	deleted, _ := m.Delete(ctx) // the fencing counter was left
	fmt.Println("deleted:", deleted, mr.Exists("redisson_lock_token:{retired-job}"))
	// Output:
	// held: true
	// deleted: true false
}
