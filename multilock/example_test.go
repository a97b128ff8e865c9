package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// inProcess starts an in-process Redis server for an example and returns
// it with a client of it; stop shuts both down, and latchkey's shared
// pub/sub connection and watchdog for the client. A program dials its
// servers' addresses instead.
func inProcess() (mr *miniredis.Miniredis, rdb *redis.Client, stop func()) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	rdb = redis.NewClient(&redis.Options{Addr: mr.Addr()})
	return mr, rdb, func() {
		_ = latchkey.Close(rdb)
		_ = rdb.Close()
		mr.Close()
	}
}

func Example() {
	// Two accounts whose locks live on two different Redis servers, here
	// in-process ones (see inProcess).
	_, rdbEast, stopEast := inProcess()
	defer stopEast()
	_, rdbWest, stopWest := inProcess()
	defer stopWest()
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
	// Two in-process Redis servers (see inProcess).
	_, rdbEast, stopEast := inProcess()
	defer stopEast()
	_, rdbWest, stopWest := inProcess()
	defer stopWest()
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

// LockContext gives the work done under the hold a context that ends with
// it. Here account 42's lock is lost while the transfer runs (an operator
// deletes its key): the context is cancelled with the cause, which names
// the member; account 17 stays held until Unlock releases it, and Unlock
// reports account 42 not held.
func ExampleMultiLock_LockContext() {
	// An in-process Redis server (see inProcess).
	mr, rdb, stop := inProcess()
	defer stop()

	from := mutex.New(rdb, "account:17")
	// A short watchdog timeout, so that the loss shows within 100ms.
	to := mutex.New(rdb, "account:42", mutex.WithWatchdogTimeout(300*time.Millisecond))
	transfer := multilock.New(from, to)
	ctx, err := transfer.LockContext(context.Background())
	if err != nil {
		fmt.Println("lock:", err)
		return
	}

	mr.Del("account:42") // the hold of account 42 is lost
	<-ctx.Done()         // the transfer watches ctx and stops
	fmt.Println("transfer stopped:", context.Cause(ctx))
	held, _ := from.IsLocked(context.Background())
	fmt.Println("account 17 held:", held)

	err = transfer.Unlock(context.Background())
	fmt.Println("unlock, account 42 not held:", errors.Is(err, latchkey.ErrNotHeld))
	held, _ = from.IsLocked(context.Background())
	fmt.Println("account 17 held:", held)
	// Output:
	// transfer stopped: multilock: member 1 "account:42": mutex: account:42: latchkey: hold lost: found gone on renewal
	// account 17 held: true
	// unlock, account 42 not held: true
	// account 17 held: false
}
