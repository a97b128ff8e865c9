package pubsub_test

import (
	"context"
	"fmt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
)

// A Hub of its own gives a group of primitives a subscriber connection of
// their own, with its own settings, instead of the one their client shares.
func ExampleNew() {
	rdb, stop := redistest.ExampleClient()
	defer stop()
	defer latchkey.Close(rdb)
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
