package fairlock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/redis/go-redis/v9"
)

func Example() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	m := fairlock.New(client, "invoices")
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("locked")
	// ... work on the invoices, alone ...
	if err := m.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("unlocked")
	// Output:
	// locked
	// unlocked
}

// Waiters get the lock in the order they asked for it.
func Example_order() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	holder := fairlock.New(client, "report")
	if err := holder.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	var wg sync.WaitGroup
	for i, worker := range []string{"first", "second", "third"} {
		wg.Go(func() {
			m := fairlock.New(client, "report")
			if err := m.Lock(ctx); err != nil {
				fmt.Println(err)
				return
			}
			fmt.Println(worker)
			_ = m.Unlock(ctx)
		})
		// Start the next worker once this one is queued.
		for client.LLen(ctx, "redisson_lock_queue:{report}").Val() != int64(i+1) {
			time.Sleep(time.Millisecond)
		}
	}
	_ = holder.Unlock(ctx)
	wg.Wait()
	// Output:
	// first
	// second
	// third
}

func ExampleMutex_TryLock() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	a := fairlock.New(client, "nightly-job")
	b := fairlock.New(client, "nightly-job")
	_ = a.Lock(ctx)

	ok, err := b.TryLock(ctx, 20*time.Millisecond)
	fmt.Println(ok, err)
	_ = a.Unlock(ctx)
	ok, err = b.TryLock(ctx, 0)
	fmt.Println(ok, err)
	_ = b.Unlock(ctx)
	// Output:
	// false <nil>
	// true <nil>
}

// An owner carried by the context may lock again while it holds the lock.
func ExampleMutex_Lock_reentrant() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client) // the shared pub/sub connection and the watchdog
	ctx := latchkey.WithOwner(context.Background())

	m := fairlock.New(client, "ledger")
	_ = m.Lock(ctx)
	_ = m.Lock(ctx) // the same owner: no wait
	n, _ := m.HoldCount(ctx)
	fmt.Println("holds:", n)
	_ = m.Unlock(ctx)
	_ = m.Unlock(ctx)
	locked, _ := m.IsLocked(ctx)
	fmt.Println("locked:", locked)
	// Output:
	// holds: 2
	// locked: false
}

// Done reports a hold that ended without Unlock.
func ExampleMutex_Done() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client) // the shared pub/sub connection and the watchdog
	ctx := context.Background()

	m := fairlock.New(client, "export", fairlock.WithLease(20*time.Millisecond))
	_ = m.Lock(ctx)
	<-m.Done() // the lease ran out
	fmt.Println(errors.Is(m.Err(), latchkey.ErrLost))
	fmt.Println(errors.Is(m.Unlock(ctx), latchkey.ErrNotHeld))
	// Output:
	// true
	// true
}

// Token fences a resource: each hold of the fair lock gets a token above
// every earlier one, so a store can refuse a writer that lost its turn.
func ExampleMutex_Token() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	defer latchkey.Close(client)
	ctx := context.Background()

	m := fairlock.New(client, "ledger")
	var last int64 // what the store remembers
	for range 2 {
		if err := m.Lock(ctx); err != nil {
			panic(err)
		}
		fmt.Println("write accepted:", m.Token() > last)
		last = m.Token()
		_ = m.Unlock(ctx)
	}
	// Output:
	// write accepted: true
	// write accepted: true
}
