package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func init() {
	registerScenario(&Scenario{
		Name: "hotlock", Rank: 10, Kinds: []Kind{KindMutex}, Workers: 8, Contended: true,
		About: "8 workers, each with its own client, loop on one lock: Lock, hold 1ms, Unlock, think 1ms.",
		Run:   Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
	registerScenario(&Scenario{
		Name: "pingpong", Rank: 9, Kinds: []Kind{KindMutex}, Workers: 2, Contended: true,
		About: "2 workers, each with its own client, take turns on one lock: Lock, hold 1ms, Unlock, think 1ms. " +
			"The other worker always waits at an Unlock and no third one can take its turn, so the handoff is " +
			"the wake-up path alone: the releaser's trip and the waiter's (wake-and-retry pays a second).",
		Run: Load{Workers: 2, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
	registerScenario(&Scenario{
		Name: "hotlock-many", Rank: 11, Kinds: []Kind{KindMutex}, Workers: 64, Contended: true,
		About: "hotlock with 64 workers: Lock, hold 1ms, Unlock, think 1ms.",
		Run:   Load{Workers: 64, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run,
	})
	registerScenario(&Scenario{
		Name: "hotlock-1client", Rank: 12, Kinds: []Kind{KindMutex}, Workers: 8, Contended: true, Optional: true,
		About: "hotlock with the 8 workers sharing one client, as goroutines of one process would " +
			"(each still has its own handle).",
		Run: Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1, OneClient: true}.Run,
	})
}

// A Load is a contended workload: Workers goroutines, each with its own
// client and handle, loop Lock, hold, Unlock, think on one primitive.
type Load struct {
	Workers  int
	Hold     time.Duration
	Think    time.Duration
	Shared   float64 // fraction of acquisitions taken shared; needs a ReadHandle
	Capacity int     // exclusive holders allowed at once: 1 for a lock, the permits of a semaphore
	// OneClient makes the workers share one client, as goroutines of one
	// process; by default each has its own, as processes would.
	OneClient bool
	Nodes     bool // the workers also need clients on the independent masters
	// Java is how many of the workers, the last ones, are emulated Redisson
	// clients on the same lock name instead of the impl (mixed.go).
	Java int
}

// acq is one acquisition, as offsets from the start of the run: when Lock
// was called, when it returned, when Unlock was called and when it
// returned.
type acq struct {
	start, got, unl, rel time.Duration
	shared               bool
}

type worker struct {
	acqs                    []acq
	errors, gaveUp, violate int
	firstErr                string
}

func (w *worker) fail(err error) {
	if errors.Is(err, errGaveUp) {
		w.gaveUp++
	} else {
		w.errors++
	}
	if w.firstErr == "" {
		w.firstErr = err.Error()
	}
}

// A gauge counts current holders, as the workers see them: it is entered
// after Lock returns and left before Unlock is called, so a count above
// what the primitive allows is a real violation of mutual exclusion.
type gauge struct{ v atomic.Int64 }

const exclusiveUnit = 1 << 32

// enter records a new holder and reports whether that violates exclusion.
func (g *gauge) enter(shared bool, capacity int) bool {
	if shared {
		v := g.v.Add(1)
		return v >= exclusiveUnit
	}
	v := g.v.Add(exclusiveUnit)
	return v/exclusiveUnit > int64(capacity) || v%exclusiveUnit > 0
}

func (g *gauge) leave(shared bool) {
	if shared {
		g.v.Add(-1)
	} else {
		g.v.Add(-exclusiveUnit)
	}
}

// Run runs the load on im for d.
func (ld Load) Run(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	nc := ld.Workers
	if ld.OneClient {
		nc = 1
	}
	cs, err := env.NewClients(ctx, im, nc, ld.Nodes)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	name := env.Name("load", im.Name)
	if im.Prepare != nil {
		if err := im.Prepare(ctx, cs.List[0], name, ld.Capacity); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	handles := make([]Locker, ld.Workers)
	for i := range handles {
		switch {
		case i >= ld.Workers-ld.Java:
			handles[i] = newRedissonLock(cs.List[i%nc], name)
		case ld.Shared > 0:
			handles[i], err = handle[RWLocker](ctx, im, cs.List[i%nc], name)
		default:
			handles[i], err = handle[Locker](ctx, im, cs.List[i%nc], name)
		}
		if err != nil {
			return nil, err
		}
	}
	run := &Run{IdlePings: pings(ctx, env.Control, 100)}
	m := startMeter(ctx, env, cs)
	var (
		g       gauge
		wg      sync.WaitGroup
		workers = make([]worker, ld.Workers)
	)
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	t0 := time.Now()
	for i := range workers {
		wg.Go(func() { ld.work(rctx, env, handles[i], t0, &workers[i], &g) })
	}
	// The yardstick PING runs on its own client under the same load.
	pc := pinger(rctx, env.Control, 2*time.Millisecond, m)
	wg.Wait()
	run.Pings = <-pc
	run.Use = m.stop(ctx)

	var all []acq
	for _, w := range workers {
		all = append(all, w.acqs...)
		run.PerWorker = append(run.PerWorker, len(w.acqs))
		run.Errors += w.errors
		run.GiveUps += w.gaveUp
		run.Violations += w.violate
		if run.FirstErr == "" {
			run.FirstErr = w.firstErr
		}
	}
	run.Ops = len(all)
	run.Wall = d
	if ld.Java > 0 {
		ld.sides(run, workers)
	}
	ld.timeline(run, all)
	return run, nil
}

func (ld Load) work(ctx context.Context, env *Env, h Locker, t0 time.Time, w *worker, g *gauge) {
	rh, _ := h.(RWLocker)
	rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
	for ctx.Err() == nil {
		shared := ld.Shared > 0 && rng.Float64() < ld.Shared
		start := time.Now()
		var err error
		if shared {
			err = rh.RLock(ctx)
		} else {
			err = h.Lock(ctx)
		}
		if err != nil {
			if ended(ctx) {
				return // the run ended: not the impl's failure
			}
			w.fail(err)
			sleep(ctx, max(ld.Think, time.Millisecond))
			continue
		}
		got := time.Now()
		if g.enter(shared, ld.Capacity) {
			w.violate++
		}
		time.Sleep(ld.Hold)
		g.leave(shared)
		unl := time.Now()
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if shared {
			err = rh.RUnlock(uctx)
		} else {
			err = h.Unlock(uctx)
		}
		cancel()
		if err != nil {
			w.fail(err)
		}
		w.acqs = append(w.acqs, acq{start.Sub(t0), got.Sub(t0), unl.Sub(t0), time.Since(t0), shared})
		env.Ops.Add(1)
		sleep(ctx, ld.Think)
	}
}

// timeline derives waits, held time and handoff gaps from the acquisitions.
//
// Held time, the server's view, is the union of [Lock returned, Unlock
// returned]: both ends lag the server by about half a round trip, so its
// length is the server's. User-side held time is the union of [Lock
// returned, Unlock called]: the time some worker was inside the critical
// section. With a capacity above 1 both are sums divided by the capacity.
//
// For an exclusive lock, a handoff gap runs from an Unlock call to the next
// acquisition's Lock return, counted only when some worker was already
// waiting at that call (so it is time the lock was not used while wanted,
// the release's own round trip included).
func (ld Load) timeline(run *Run, all []acq) {
	slices.SortFunc(all, func(a, b acq) int { return int(a.got - b.got) })
	var held, user span
	var sum, userSum time.Duration
	for _, a := range all {
		run.Waits = append(run.Waits, a.got-a.start)
		if ld.Shared > 0 {
			mode := "write wait"
			if a.shared {
				mode = "read wait"
			}
			run.addSeries(mode, a.got-a.start)
		}
		sum += a.rel - a.got
		userSum += a.unl - a.got
		held.add(a.got, a.rel)
		user.add(a.got, a.unl)
		run.Wall = max(run.Wall, a.rel)
	}
	run.Held, run.UserHeld = held.total(), user.total()
	if ld.Capacity > 1 {
		run.Held = sum / time.Duration(ld.Capacity)
		run.UserHeld = userSum / time.Duration(ld.Capacity)
	}
	if ld.Capacity != 1 || ld.Shared > 0 || len(all) < 2 {
		return
	}
	// firstStart[i] is the earliest Lock call among acquisitions i and later.
	firstStart := make([]time.Duration, len(all))
	firstStart[len(all)-1] = all[len(all)-1].start
	for i := len(all) - 2; i >= 0; i-- {
		firstStart[i] = min(all[i].start, firstStart[i+1])
	}
	for i, a := range all[:len(all)-1] {
		if firstStart[i+1] <= a.unl {
			run.Handoffs = append(run.Handoffs, max(0, all[i+1].got-a.unl))
		}
	}
}

// span accumulates the length of the union of intervals added in order of
// their start.
type span struct {
	start, end time.Duration
	sum        time.Duration
	open       bool
}

func (s *span) add(from, to time.Duration) {
	switch {
	case !s.open:
		s.start, s.end, s.open = from, to, true
	case from > s.end:
		s.sum += s.end - s.start
		s.start, s.end = from, to
	default:
		s.end = max(s.end, to)
	}
}

func (s *span) total() time.Duration {
	if !s.open {
		return 0
	}
	return s.sum + s.end - s.start
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// ended reports whether the run's ctx is over or its deadline has passed:
// a call whose network deadline go-redis took from ctx can fail with an
// i/o timeout before ctx's own timer marks it done.
func ended(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(dl)
}
