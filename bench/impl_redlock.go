package main

import (
	"context"
	"math"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
	"github.com/redis/go-redis/v9"
)

// redlockNodes is how many independent masters the redlock scenario spans.
const redlockNodes = 5

func init() {
	register(&Impl{
		Name:  "latchkey-redlock",
		Color: "#ff7f0e",
		Kind:  KindRedlock,
		Rank:  80,
		About: "latchkey redlock over 5 masters with its defaults: watchdog 30s, waiters retry after a " +
			"random delay up to 200ms.",
		New: func(c *Conn, name string) any {
			return latchkeyRedlock{redlock.New(universal(c.Nodes), name)}
		},
		Close: closeLatchkey,
	})
	register(&Impl{
		Name:  "latchkey-redlock-hub",
		Color: "#bcbd22",
		Kind:  KindRedlock,
		Rank:  81,
		About: "latchkey redlock over 5 masters with WithHub(pubsub.Shared(first node)): waiters queue on that " +
			"node, and an unlock grants it to the first in line, which then asks every node.",
		New: func(c *Conn, name string) any {
			return latchkeyRedlock{redlock.New(universal(c.Nodes), name, redlock.WithHub(pubsub.Shared(c.Nodes[0])))}
		},
		Close: closeLatchkey,
	})
	register(&Impl{
		Name:  "redsync-redlock",
		Color: "#ad1457",
		Kind:  KindRedlock,
		Rank:  82,
		About: "redsync v4 over the same 5 masters (one pool each), tries raised to MaxInt32; " +
			"otherwise its defaults.",
		New: func(c *Conn, name string) any {
			var pools []redsyncredis.Pool
			for _, n := range c.Nodes {
				pools = append(pools, goredis.NewPool(n))
			}
			return &redsyncMutex{m: redsync.New(pools...).NewMutex(name, redsync.WithTries(math.MaxInt32))}
		},
	})
	registerScenario(&Scenario{
		Name: "redlock", Rank: 70, Kinds: []Kind{KindRedlock}, Workers: 8, Contended: true, Nodes: redlockNodes,
		About: "hotlock over 5 independent masters (8 workers, hold 1ms, think 1ms); " +
			"commands are counted on all 5.",
		Run: Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1, Nodes: true}.Run,
	})
}

func universal(cs []*redis.Client) []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

type latchkeyRedlock struct{ m *redlock.Mutex }

func (l latchkeyRedlock) Lock(ctx context.Context) error   { return l.m.Lock(ctx) }
func (l latchkeyRedlock) Unlock(ctx context.Context) error { return l.m.Unlock(ctx) }
