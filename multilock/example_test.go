package multilock_test

import (
	"context"
	"fmt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// newClient returns a client of a throwaway in-process Redis (miniredis),
// standing in for redis.NewClient(&redis.Options{Addr: "localhost:6379"}),
// and a function that releases latchkey's resources, the client and the server.
func newClient() (*redis.Client, func()) {
	rdb, stop := redistest.ExampleClient()
	return rdb, func() { _ = latchkey.Close(rdb); stop() }
}

func Example() {
	// Two accounts whose locks live on two different Redis servers.
	east, stopEast := newClient()
	defer stopEast()
	west, stopWest := newClient()
	defer stopWest()
	ctx := context.Background()

	from := mutex.New(east, "account:17")
	to := mutex.New(west, "account:42")
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
	east, stopEast := newClient()
	defer stopEast()
	west, stopWest := newClient()
	defer stopWest()
	ctx := context.Background()

	audit := mutex.New(west, "account:42") // another task holds account 42
	if err := audit.Lock(ctx); err != nil {
		fmt.Println("lock:", err)
		return
	}

	from := mutex.New(east, "account:17")
	transfer := multilock.New(from, mutex.New(west, "account:42"))
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
