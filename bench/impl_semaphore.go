package main

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/semaphore"
)

func init() {
	register(&Impl{
		Name:  "latchkey-sem",
		Color: "#00897b",
		Kind:  KindSemaphore,
		Rank:  50,
		About: "latchkey semaphore: waiters of every client queue; a release grants its permits in order to the waiters it can satisfy, in the same script, and tells only them; each confirms with one take.",
		New:   func(c *Conn, name string) any { return sem{semaphore.New(c.Client, name)} },
		Prepare: func(ctx context.Context, c *Conn, name string, capacity int) error {
			return semaphore.New(c.Client, name).SetPermits(ctx, int64(capacity))
		},
		Close: closeLatchkey,
	})
	registerScenario(&Scenario{
		Name: "semaphore", Rank: 40, Kinds: []Kind{KindSemaphore}, Workers: 64, Contended: true,
		About: "64 workers on a semaphore of 8 permits, one permit each: hold 1ms, think 1ms. " +
			"Utilization is permit-time used over wall time × 8.",
		Run: Load{Workers: 64, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 8}.Run,
	})
	registerScenario(&Scenario{
		Name: "semaphore-32x4", Rank: 41, Kinds: []Kind{KindSemaphore}, Workers: 32, Contended: true,
		About: "32 workers on a semaphore of 4 permits, one permit each: hold 1ms, think 1ms (issue 13's case). " +
			"Utilization is permit-time used over wall time × 4.",
		Run: Load{Workers: 32, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 4}.Run,
	})
}

type sem struct{ s *semaphore.Semaphore }

func (s sem) Lock(ctx context.Context) error   { return s.s.Acquire(ctx, 1) }
func (s sem) Unlock(ctx context.Context) error { return s.s.Release(ctx, 1) }
