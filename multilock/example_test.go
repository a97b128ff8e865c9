package multilock_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

func Example() {
	// Two accounts whose locks live on two different Redis servers, here
	// in-process ones; a program dials its servers' addresses.
	east, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer east.Close()
	west, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer west.Close()
	rdbEast := redis.NewClient(&redis.Options{Addr: east.Addr()})
	defer rdbEast.Close()
	defer latchkey.Close(rdbEast) // the shared pub/sub connection and the watchdog
	rdbWest := redis.NewClient(&redis.Options{Addr: west.Addr()})
	defer rdbWest.Close()
	defer latchkey.Close(rdbWest)
	ctx := context.Background()

	from := mutex.New(rdbEast, "account:17")
	to := mutex.New(rdbWest, "account:42")
	transfer := multilock.New(from, to)
	if err := transfer.Lock(ctx); err != nil {
		fmt.Println("lock:", err)
		return
	}
	fmt.Println("both accounts locked")
	if err := transfer.Unlock(ctx); err != nil {
		fmt.Println("unlock:", err)
	}
	fmt.Println("both accounts unlocked")
	// Output:
	// both accounts locked
	// both accounts unlocked
}

// All or nothing: while one member is held elsewhere, TryLock fails and
// leaves the other members free.
func ExampleMultiLock_TryLock() {
	// Two in-process Redis servers; a program dials its servers' addresses.
	east, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer east.Close()
	west, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer west.Close()
	rdbEast := redis.NewClient(&redis.Options{Addr: east.Addr()})
	defer rdbEast.Close()
	defer latchkey.Close(rdbEast) // the shared pub/sub connection and the watchdog
	rdbWest := redis.NewClient(&redis.Options{Addr: west.Addr()})
	defer rdbWest.Close()
	defer latchkey.Close(rdbWest)
	ctx := context.Background()

	audit := mutex.New(rdbWest, "account:42") // another task holds account 42
	if err := audit.Lock(ctx); err != nil {
		fmt.Println("lock:", err)
		return
	}

	from := mutex.New(rdbEast, "account:17")
	transfer := multilock.New(from, mutex.New(rdbWest, "account:42"))
	ok, err := transfer.TryLock(ctx, 0)
	fmt.Println("transfer locked:", ok, err)
	held, _ := from.IsLocked(ctx)
	fmt.Println("account 17 held:", held)

	_ = audit.Unlock(ctx)
	ok, err = transfer.TryLock(ctx, 0)
	fmt.Println("after the audit:", ok, err)
	_ = transfer.Unlock(ctx)
	// Output:
	// transfer locked: false <nil>
	// account 17 held: false
	// after the audit: true <nil>
}
