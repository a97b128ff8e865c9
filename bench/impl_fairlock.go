package main

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/fairlock"
)

func init() {
	register(&Impl{
		Name:  "latchkey-fair",
		Color: "#17becf",
		Kind:  KindFairLock,
		Rank:  30,
		About: "latchkey fairlock with its defaults: FIFO queue in Redis, only the first waiter is woken, " +
			"watchdog lease 30s, Redisson's 5-minute waiter timeout, dead latchkey waiters skipped after 5s.",
		New:   func(c *Conn, name string) any { return fairLock{fairlock.New(c.Client, name)} },
		Close: closeLatchkey,
	})
	registerScenario(&Scenario{
		Name: "fairlock", Rank: 20, Kinds: []Kind{KindFairLock}, Also: []string{"latchkey"},
		Workers: 8, Contended: true,
		About: "hotlock on a fair lock (8 workers, hold 1ms, think 1ms), beside latchkey's plain mutex: " +
			"watch per-worker min/max and the longest wait.",
		Run: Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
}

type fairLock struct{ m *fairlock.Mutex }

func (l fairLock) Lock(ctx context.Context) error   { return l.m.Lock(ctx) }
func (l fairLock) Unlock(ctx context.Context) error { return l.m.Unlock(ctx) }
