package pubsub_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// A Hub of its own gives a group of primitives a subscriber connection of
// their own, with its own settings, instead of the one their client shares.
func ExampleNew() {
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

	hub := pubsub.New(rdb, pubsub.WithLinger(0))
	defer hub.Close()
	m := mutex.New(rdb, "reports", mutex.WithHub(hub))
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	fmt.Println("held; waiters on the hub:", hub.Stats().Waiters)
	if err := m.Unlock(ctx); err != nil {
		panic(err)
	}
	// Output: held; waiters on the hub: 0
}
