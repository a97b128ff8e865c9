package latchkey_test

import (
	"context"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

func run(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	return updateStock(ctx, rdb, "sku-42")
}

// updateStock may run in any number of processes at once: one at a time
// holds the item's lock.
func updateStock(ctx context.Context, rdb *redis.Client, sku string) error {
	m := mutex.New(rdb, "inventory:"+sku)
	if err := m.Lock(ctx); err != nil { // blocks until held or ctx ends
		return err
	}
	defer m.Unlock(context.WithoutCancel(ctx))
	// Held: m.Token() is a fencing token, and <-m.Done() closes if the
	// hold is lost.
	return nil
}
