package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// startNodes stands in for independent Redis masters: it starts n
// in-process miniredis servers and returns a client for each, the servers,
// and a function that closes them all.
func startNodes(n int) ([]redis.UniversalClient, []*miniredis.Miniredis, func()) {
	var (
		clients []redis.UniversalClient
		servers []*miniredis.Miniredis
		closers []func()
	)
	for range n {
		mr, err := miniredis.Run()
		if err != nil {
			panic(err)
		}
		c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		clients = append(clients, c)
		servers = append(servers, mr)
		closers = append(closers, func() {
			_ = latchkey.Close(c)
			_ = c.Close()
			mr.Close()
		})
	}
	return clients, servers, func() {
		for _, f := range closers {
			f()
		}
	}
}

func Example() {
	// One client per independent master (three miniredis servers here).
	clients, _, stop := startNodes(3)
	defer stop()
	ctx := context.Background()

	m := redlock.New(clients, "invoice-42")
	if err := m.Lock(ctx); err != nil {
		fmt.Println("lock:", err)
		return
	}
	fmt.Println("locked on a quorum of 3 nodes")

	other := redlock.New(clients, "invoice-42")
	ok, err := other.TryLock(ctx, 0)
	fmt.Println("another handle gets it:", ok, err)

	if err := m.Unlock(ctx); err != nil {
		fmt.Println("unlock:", err)
	}
	ok, err = other.TryLock(ctx, 0)
	fmt.Println("after Unlock:", ok, err)
	_ = other.Unlock(ctx)
	// Output:
	// locked on a quorum of 3 nodes
	// another handle gets it: false <nil>
	// after Unlock: true <nil>
}

// A hold ends without Unlock when too few nodes keep it: Done closes and
// Err says why.
func ExampleMutex_Done() {
	clients, _, stop := startNodes(3)
	defer stop()
	ctx := context.Background()

	m := redlock.New(clients, "report")
	if err := m.Lock(ctx); err != nil {
		fmt.Println("lock:", err)
		return
	}
	// An operator deletes the lock on two of the three nodes.
	clients[0].Del(ctx, "report")
	clients[1].Del(ctx, "report")

	err := m.Unlock(ctx)
	fmt.Println("unlock:", errors.Is(err, latchkey.ErrNotHeld))
	<-m.Done()
	fmt.Println("lost:", errors.Is(m.Err(), latchkey.ErrLost))
	// Output:
	// unlock: true
	// lost: true
}

// When too few nodes answer, the error says which ones failed and why.
func ExampleQuorumError() {
	clients, servers, stop := startNodes(3)
	defer stop()
	ctx := context.Background()
	servers[1].Close() // two of the three nodes go down
	servers[2].Close()

	m := redlock.New(clients, "nightly-job", redlock.WithNodeTimeout(100*time.Millisecond))
	_, err := m.TryLock(ctx, 0)
	var qe *redlock.QuorumError
	if errors.As(err, &qe) {
		fmt.Printf("%d of %d nodes answered, %d needed\n", qe.OK, qe.Nodes, qe.Quorum)
		for _, ne := range qe.Errs {
			fmt.Printf("node %d failed\n", ne.Node)
		}
	}
	// Output:
	// 1 of 3 nodes answered, 2 needed
	// node 1 failed
	// node 2 failed
}
