package latchkey_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// WithOwner makes a call chain one owner, as a Java thread is one in
// Redisson: a function that holds a lock may call another that locks it
// again. Without an owner the inner Lock would wait for the outer one.
func ExampleWithOwner() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	m := mutex.New(rdb, "account:17")
	credit := func(ctx context.Context) error {
		if err := m.Lock(ctx); err != nil { // re-entered: does not wait
			return err
		}
		defer m.Unlock(context.WithoutCancel(ctx))
		n, _ := m.HoldCount(ctx)
		fmt.Println("inside credit, hold count", n)
		return nil
	}
	transfer := func(ctx context.Context) error {
		if err := m.Lock(ctx); err != nil {
			return err
		}
		defer m.Unlock(context.WithoutCancel(ctx))
		return credit(ctx)
	}

	// One owner per call chain: each goroutine that must exclude the
	// others gets its own WithOwner, never a shared one.
	ctx := latchkey.WithOwner(context.Background())
	if err := transfer(ctx); err != nil {
		panic(err)
	}
	held, _ := m.IsLocked(ctx)
	fmt.Println("held after transfer:", held)
	// Output:
	// inside credit, hold count 2
	// held after transfer: false
}

// An owner id can travel to another process, which unlocks on the
// owner's behalf, as Redisson unlocks by thread id.
func ExampleWithOwnerID() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb)

	// The process that takes the lock.
	ctx := latchkey.WithOwner(context.Background())
	if err := mutex.New(rdb, "export:2024-06").Lock(ctx); err != nil {
		panic(err)
	}
	id := latchkey.OwnerID(ctx) // "<uuid>:<n>", sent along with the job

	// The process that finishes the job, with a client and handle of its own.
	other := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer other.Close()
	defer latchkey.Close(other)
	m := mutex.New(other, "export:2024-06")
	err = m.Unlock(latchkey.WithOwnerID(context.Background(), id))
	fmt.Println("unlocked for the owner:", err)
	held, _ := m.IsLocked(context.Background())
	fmt.Println("held:", held)
	// Output:
	// unlocked for the owner: <nil>
	// held: false
}

// OwnerID tells whether a context carries an owner.
func ExampleOwnerID() {
	fmt.Println(latchkey.OwnerID(context.Background()) == "")
	fmt.Println(latchkey.OwnerID(latchkey.WithOwner(context.Background())) != "")
	// Output:
	// true
	// true
}

// Close belongs before the client's own Close, when a program shuts down.
// Holds the watchdog was renewing end as lost, and their keys expire with
// their lease, as when a Redisson client shuts down; a wait still blocked
// returns an error matching ErrClosed.
func ExampleClose() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	m := mutex.New(rdb, "nightly-job")
	if err := m.Lock(context.Background()); err != nil {
		panic(err)
	}
	// At shutdown, whether the work is done or not:
	if err := latchkey.Close(rdb); err != nil {
		panic(err)
	}
	<-m.Done()
	fmt.Println("hold lost:", errors.Is(m.Err(), latchkey.ErrLost))
	// Output: hold lost: true
}

// Preload loads the scripts at start-up, so that no first call pays for
// loading one.
func ExamplePreload() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb)

	if err := latchkey.Preload(context.Background(), rdb); err != nil {
		fmt.Println("preload:", err) // not fatal: a script missing is loaded when first run
	}
	fmt.Println("ready")
	// Output: ready
}

// SetPolling serves a network that refuses SUBSCRIBE: the client's waiters
// poll, in queue order, and the client never subscribes.
func ExampleSetPolling() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb)
	latchkey.SetPolling(rdb, true) // before the client's first call
	ctx := context.Background()

	holder, waiter := mutex.New(rdb, "report"), mutex.New(rdb, "report")
	if err := holder.Lock(ctx); err != nil {
		panic(err)
	}
	got := make(chan error)
	go func() { got <- waiter.Lock(ctx) }() // queues, then looks every few ms
	if err := holder.Unlock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("waiter took it:", <-got == nil)
	fmt.Println("channels subscribed:", len(mr.PubSubChannels("*"))+mr.PubSubNumPat())
	_ = waiter.Unlock(ctx)
	// Output:
	// waiter took it: true
	// channels subscribed: 0
}
