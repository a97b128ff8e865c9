package election_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/election"
	"github.com/redis/go-redis/v9"
)

// Two replicas of a service elect the one that runs the scheduler; anyone
// can ask who it is.
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

	e := election.New(rdb, "scheduler")
	leading, err := e.Campaign(ctx, "replica-1:8080") // blocks until elected
	if err != nil {
		panic(err)
	}
	// Every write the leader makes carries its term: a store that refuses a
	// term below the last it saw refuses a deposed leader.
	fmt.Println("leading with a term:", e.Term() > 0)

	l, err := election.New(rdb, "scheduler").Leader(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("leader:", l.Value)

	if err := e.Resign(ctx); err != nil {
		panic(err)
	}
	<-leading.Done() // the leadership's context ends with it
	fmt.Println("resigned:", context.Cause(leading) == context.Canceled)
	// Output:
	// leading with a term: true
	// leader: replica-1:8080
	// resigned: true
}

// Observe follows the leadership without polling: each change arrives as it
// happens, the zero Leader meaning that nobody leads.
func ExampleElection_Observe() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	changes := election.New(rdb, "primary").Observe(ctx)
	fmt.Printf("%q\n", (<-changes).Value)

	e := election.New(rdb, "primary")
	if _, err := e.Campaign(ctx, "db-2"); err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", (<-changes).Value)
	if err := e.Proclaim(ctx, "db-2 (draining)"); err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", (<-changes).Value)
	// Output:
	// ""
	// "db-2"
	// "db-2 (draining)"
}
