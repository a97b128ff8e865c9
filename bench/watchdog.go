package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The watchdog scenario holds watchdogLocks locks in one process (a tenth
// of that on miniredis, whose Lua is far slower) for at least two renewal
// periods. Its impls renew every watchdogLease/3.
const (
	watchdogLocks  = 10000
	watchdogLease  = 1500 * time.Millisecond
	watchdogPeriod = watchdogLease / 3
)

func init() {
	registerScenario(&Scenario{
		Name: "watchdog", Rank: 60, Kinds: []Kind{KindWatchdog}, Workers: 1, Table: tableCustom,
		About: fmt.Sprintf("One process holds %d locks (a tenth on miniredis), kept alive with a %v lease renewed every %v, "+
			"for at least 2 periods; counts what the renewals cost per period.",
			watchdogLocks, watchdogLease, watchdogPeriod),
		Run:    watchdogRun,
		Finish: watchdogFinish,
	})
}

// A Kept is a lock whose hold is renewed in the background while held.
// Lost reports whether the hold ended without Unlock.
type Kept interface {
	Locker
	Lost() bool
}

func watchdogRun(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	cs, err := env.NewClients(ctx, im, 1, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	prefix := env.Name("watchdog", im.Name)
	n := watchdogLocks
	if env.Mini {
		n /= 10
	}
	hs := make([]Kept, n)
	for i := range hs {
		if hs[i], err = handle[Kept](ctx, im, cs.List[0], fmt.Sprintf("%s:%d", prefix, i)); err != nil {
			return nil, err
		}
	}
	var w worker
	each := func(f func(Kept) error) {
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for g := range 32 {
			wg.Go(func() {
				for i := g; i < len(hs); i += 32 {
					if err := f(hs[i]); err != nil {
						mu.Lock()
						w.fail(err)
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
	}
	each(func(h Kept) error { return h.Lock(ctx) })
	if w.errors > 0 {
		return nil, fmt.Errorf("taking %d locks: %d failed: %s", n, w.errors, w.firstErr)
	}
	window := max(d, 2*watchdogPeriod)
	run := &Run{Wall: window, Ops: n, PerWorker: []int{n}}
	m := startMeter(ctx, env, cs)
	sleep(ctx, window)
	run.Use = m.stop(ctx)
	lost := 0
	for _, h := range hs {
		if h.Lost() {
			lost++
		}
	}
	each(func(h Kept) error { return h.Unlock(context.WithoutCancel(ctx)) })
	run.addExtra("locks", float64(n))
	run.addExtra("periods", float64(window)/float64(watchdogPeriod))
	run.addExtra("lost", float64(lost))
	if run.Use.RoundTrips >= 0 {
		run.addExtra("renewal round trips", float64(run.Use.RoundTrips))
		run.addExtra("renewal commands", float64(run.Use.Commands))
		run.addExtra("renewal server µs", float64(run.Use.Usec))
	}
	run.Errors, run.FirstErr = w.errors+lost, w.firstErr
	if lost > 0 && run.FirstErr == "" {
		run.FirstErr = fmt.Sprintf("%d holds lost while held", lost)
	}
	return run, nil
}

// watchdogFinish turns the summed counts into costs per renewal period.
func watchdogFinish(r *Result) {
	p := r.Extra["periods"]
	if p <= 0 {
		return
	}
	if rt, ok := r.Extra["renewal round trips"]; ok {
		r.Extra["round trips per period"] = rt / p
		r.Extra["commands per lock per period"] = r.Extra["renewal commands"] / p / (r.Extra["locks"] / float64(r.Rounds))
		r.Extra["server ms per period"] = r.Extra["renewal server µs"] / p / 1000
	}
	// Per-acquisition figures mean nothing here.
	r.CommandsPerAcq, r.RoundTripsPerAcq, r.ServerUsPerAcq, r.PerSecond = -1, -1, 0, 0
}
