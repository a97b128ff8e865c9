package main

import (
	"context"
	"fmt"
	"time"
)

func init() {
	registerScenario(&Scenario{
		Name: "uncontended", Rank: 0, Kinds: []Kind{KindMutex}, Workers: 1,
		About: "One worker: Lock and Unlock a free lock, alternating with a PING on the same client " +
			"as the round-trip yardstick (the physical floor is 2 round trips).",
		Run: uncontended,
	})
}

func uncontended(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	cs, err := env.NewClients(ctx, im, 1, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	c := cs.List[0].Client
	h, err := handle[Locker](ctx, im, cs.List[0], env.Name("uncontended", im.Name))
	if err != nil {
		return nil, err
	}
	// One unmeasured pass loads the scripts into the server.
	if err := h.Lock(ctx); err != nil {
		return nil, fmt.Errorf("warm-up lock: %w", err)
	}
	if err := h.Unlock(ctx); err != nil {
		return nil, fmt.Errorf("warm-up unlock: %w", err)
	}
	run := &Run{PerWorker: []int{0}, Wall: d}
	var w worker
	m := startMeter(ctx, env, cs)
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && ctx.Err() == nil; {
		t := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			w.fail(err)
			continue
		}
		run.Pings = append(run.Pings, time.Since(t))
		m.probe(1)
		t = time.Now()
		if err := h.Lock(ctx); err != nil {
			w.fail(err)
			continue
		}
		if err := h.Unlock(ctx); err != nil {
			w.fail(err)
		}
		run.Lat = append(run.Lat, time.Since(t))
		env.Ops.Add(1)
	}
	run.Use = m.stop(ctx)
	run.Ops = len(run.Lat)
	run.PerWorker[0] = run.Ops
	run.Errors, run.GiveUps, run.FirstErr = w.errors, w.gaveUp, w.firstErr
	return run, nil
}
