package main

import (
	"context"
	"math"
	"time"

	"github.com/latchkey/latchkey/rwlock"
)

func init() {
	register(&Impl{
		Name:  "latchkey-rw",
		Color: "#3949ab",
		Kind:  KindRWLock,
		Rank:  40,
		About: "latchkey rwlock with its defaults: watchdog lease 30s; writer preference (a waiting writer holds back new readers; readers held back before a write unlock enter after it).",
		New:   func(c *Conn, name string) any { return rwLock{rwlock.New(c.Client, name)} },
		Close: closeLatchkey,
	})
	registerScenario(&Scenario{
		Name: "rwlock", Rank: 30, Kinds: []Kind{KindRWLock}, Workers: 8, Contended: true,
		About: "Read-heavy: 8 workers, 9 reads to 1 write at random, hold 1ms, think 1ms. " +
			"Utilization is the time anyone held the lock.",
		Run:    Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1, Shared: 0.9}.Run,
		Finish: rwFinish,
	})
}

// rwFinish adds the reads' and writes' throughput.
func rwFinish(r *Result) {
	if r.WallSeconds <= 0 {
		return
	}
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	r.Extra["reads/s"] = math.Round(float64(r.Series["read wait"].N) / r.WallSeconds)
	r.Extra["writes/s"] = math.Round(float64(r.Series["write wait"].N) / r.WallSeconds)
}

type rwLock struct{ m *rwlock.RWMutex }

func (l rwLock) Lock(ctx context.Context) error    { return l.m.Lock(ctx) }
func (l rwLock) Unlock(ctx context.Context) error  { return l.m.Unlock(ctx) }
func (l rwLock) RLock(ctx context.Context) error   { return l.m.RLock(ctx) }
func (l rwLock) RUnlock(ctx context.Context) error { return l.m.RUnlock(ctx) }
