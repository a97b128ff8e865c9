package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/pubsub"
)

// The latch scenario's size: latchWaiters goroutines spread over
// latchClients clients, as that many processes with several waiters each.
const (
	latchWaiters = 1000
	latchClients = 100
)

func init() {
	register(&Impl{
		Name:  "latchkey-latch",
		Color: "#5e35b1",
		Kind:  KindLatch,
		Rank:  60,
		About: "latchkey countdownlatch: one message on the latch's channel releases every waiter of a process, which share one look at the count.",
		New:   func(c *Conn, name string) any { return latchkeyLatch{countdownlatch.New(c.Client, name), c} },
		Close: closeLatchkey,
	})
	registerScenario(&Scenario{
		Name: "latch", Rank: 50, Kinds: []Kind{KindLatch}, Workers: latchWaiters,
		About: fmt.Sprintf("%d waiters over %d clients block on a latch of count 1; another client counts it "+
			"down. Latency: CountDown call to each Wait's return; repeated until the time is up.",
			latchWaiters, latchClients),
		Run: latchRun,
	})
}

// A Latch is a count-down latch handle.
type Latch interface {
	TrySetCount(ctx context.Context, n int64) (bool, error)
	CountDown(ctx context.Context) error
	Wait(ctx context.Context) error
}

// waitCounter is implemented by handles that can tell how many waiters their
// process has blocked, so that the scenario counts down only once all are.
type waitCounter interface{ Waiting() int }

type latchkeyLatch struct {
	*countdownlatch.Latch
	c *Conn
}

func (l latchkeyLatch) Waiting() int { return pubsub.Shared(l.c.Client).Stats().Waiters }

func latchRun(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	cs, err := env.NewClients(ctx, im, latchClients+1, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	name := env.Name("latch", im.Name)
	hs := make([]Latch, len(cs.List))
	for i, c := range cs.List {
		if hs[i], err = handle[Latch](ctx, im, c, name); err != nil {
			return nil, err
		}
	}
	counter, waiters := hs[latchClients], hs[:latchClients]
	run := &Run{PerWorker: make([]int, latchWaiters)}
	var w worker
	m := startMeter(ctx, env, cs)
	t0 := time.Now()
	rctx, cancel := context.WithCancel(ctx)
	pc := pinger(rctx, env.Control, 2*time.Millisecond, m)
	for deadline := time.Now().Add(d); ctx.Err() == nil && (run.Ops == 0 || time.Now().Before(deadline)); {
		if err := latchCycle(ctx, run, &w, counter, waiters); err != nil {
			w.fail(err)
			break
		}
		env.Ops.Add(latchWaiters)
	}
	run.Wall = time.Since(t0)
	cancel()
	run.Pings = <-pc
	run.Use = m.stop(ctx)
	run.Errors, run.GiveUps, run.FirstErr = w.errors, w.gaveUp, w.firstErr
	return run, nil
}

// latchCycle sets the count to 1, blocks every waiter, counts down and
// records when each waiter was released.
func latchCycle(ctx context.Context, run *Run, w *worker, counter Latch, waiters []Latch) error {
	if ok, err := counter.TrySetCount(ctx, 1); err != nil || !ok {
		return fmt.Errorf("TrySetCount: %v, %v", ok, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	released := make([]time.Time, latchWaiters)
	errs := make([]error, latchWaiters)
	var wg sync.WaitGroup
	for i := range latchWaiters {
		wg.Go(func() {
			errs[i] = waiters[i%len(waiters)].Wait(wctx)
			released[i] = time.Now()
		})
	}
	if err := untilBlocked(ctx, waiters, latchWaiters); err != nil {
		cancel()
		wg.Wait()
		return err
	}
	start := time.Now()
	if err := counter.CountDown(ctx); err != nil {
		cancel()
		wg.Wait()
		return fmt.Errorf("CountDown: %w", err)
	}
	wg.Wait()
	var last time.Duration
	for i, t := range released {
		switch {
		case errs[i] != nil:
			w.fail(errs[i])
		case t.Before(start):
			run.Violations++ // released before the count reached zero
		default:
			run.Lat = append(run.Lat, t.Sub(start))
			last = max(last, t.Sub(start))
			run.PerWorker[i]++
			run.Ops++
		}
	}
	run.addSeries("last waiter released", last)
	run.addExtra("cycles", 1)
	return nil
}

// untilBlocked waits until n waiters are blocked, where the handles can
// tell, or for a settling time where they cannot.
func untilBlocked(ctx context.Context, hs []Latch, n int) error {
	seen := map[waitCounter]bool{}
	var wcs []waitCounter
	for _, h := range hs {
		if wc, ok := h.(waitCounter); ok && !seen[wc] {
			seen[wc] = true
			wcs = append(wcs, wc)
		}
	}
	if len(wcs) == 0 {
		sleep(ctx, 200*time.Millisecond)
		return nil
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		total := 0
		for _, wc := range wcs {
			total += wc.Waiting()
		}
		if total >= n {
			return nil
		}
		sleep(ctx, time.Millisecond)
	}
	return fmt.Errorf("only some of %d waiters blocked within 10s", n)
}
