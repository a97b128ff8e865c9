package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// scaleWorkers is how many clients the scale scenarios run, each on a lock
// of its own.
const scaleWorkers = 16

// scaleImpls are the impls of the scale scenarios: their variants that only
// differ when a lock is contended (lease, tries, backoff) are left out.
var scaleImpls = []string{"latchkey", "wakeretry", "redisson", "redsync", "redislock-linear", "etcd", "postgres"}

func init() {
	registerScenario(&Scenario{
		Name: "scale", Rank: 3, Kinds: []Kind{KindMutex}, Workers: scaleWorkers, Only: scaleImpls,
		About: fmt.Sprintf("%d workers, each with its own client and its own lock (a hash slot each): uncontended "+
			"Lock+Unlock loops. Throughput, and what one Lock+Unlock costs the server: CPU µs (INFO cpu, "+
			"user+system, for Redis; /proc for a peer) and srv µs (INFO commandstats).", scaleWorkers),
		Run: scaleRun,
	})
	registerScenario(&Scenario{
		Name: "scale-cluster", Rank: 4, Kinds: []Kind{KindMutex}, Workers: scaleWorkers, Only: scaleImpls,
		Cluster: true,
		About: fmt.Sprintf("scale on a Redis Cluster of %d masters that the bench starts (each worker a cluster "+
			"client; the locks spread over the masters' slots). \"× 1 server\" is the ops/s over the same "+
			"impl's in scale: how throughput grows with masters (on this machine's cores).", clusterMasters),
		Run: onCluster(scaleRun),
	})
}

// scaleRun runs scaleWorkers workers, each looping Lock+Unlock on a lock
// of its own, for d.
func scaleRun(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	cs, err := env.NewClients(ctx, im, scaleWorkers, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	hs := make([]Locker, scaleWorkers)
	for i, c := range cs.List {
		if hs[i], err = handle[Locker](ctx, im, c, env.Name("scale", im.Name)); err != nil {
			return nil, err
		}
		// One unmeasured pass loads the scripts into the server.
		if err := hs[i].Lock(ctx); err != nil {
			return nil, fmt.Errorf("warm-up lock: %w", err)
		}
		if err := hs[i].Unlock(ctx); err != nil {
			return nil, fmt.Errorf("warm-up unlock: %w", err)
		}
	}
	var (
		wg      sync.WaitGroup
		workers = make([]worker, scaleWorkers)
		lats    = make([][]time.Duration, scaleWorkers)
	)
	m := startMeter(ctx, env, cs)
	t0 := time.Now()
	deadline := t0.Add(d)
	for i := range workers {
		wg.Go(func() {
			w := &workers[i]
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				if err := hs[i].Lock(ctx); err != nil {
					w.fail(err)
					continue
				}
				if err := hs[i].Unlock(ctx); err != nil {
					w.fail(err)
				}
				lats[i] = append(lats[i], time.Since(t))
				env.Ops.Add(1)
			}
		})
	}
	wg.Wait()
	run := &Run{Wall: time.Since(t0), Use: m.stop(ctx)}
	for i, w := range workers {
		run.Lat = append(run.Lat, lats[i]...)
		run.PerWorker = append(run.PerWorker, len(lats[i]))
		run.Errors += w.errors
		run.GiveUps += w.gaveUp
		if run.FirstErr == "" {
			run.FirstErr = w.firstErr
		}
	}
	run.Ops = len(run.Lat)
	return run, nil
}

// onCluster runs run on the suite's Redis Cluster.
func onCluster(run func(context.Context, *Env, *Impl, time.Duration) (*Run, error)) func(context.Context, *Env, *Impl, time.Duration) (*Run, error) {
	return func(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
		if env.ClusterEnv == nil {
			return nil, errors.New("no Redis Cluster is running")
		}
		return run(ctx, env.ClusterEnv, im, d)
	}
}
