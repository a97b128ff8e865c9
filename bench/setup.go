package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A bench is the servers of one invocation: the main Redis, the
// independent masters, the cluster and the peers, as an Env.
type bench struct {
	env   *Env
	srv   *server
	ims   []*Impl  // the selected impls that can run
	notes []string // what was left out, and why
	stops []func()
	// noCluster says why no cluster was started for the Cluster scenarios.
	noCluster string
	// noCallgrind says why no server under callgrind was started for the
	// Callgrind scenarios.
	noCallgrind string
}

// stop stops every server, newest first.
func (b *bench) stop() {
	for i := len(b.stops) - 1; i >= 0; i-- {
		b.stops[i]()
	}
}

// setup starts the servers that the selected scenarios need for the
// selected impls. On error it stops what it started.
func setup(ctx context.Context, cfg Config, scs []*Scenario, ims []*Impl, log io.Writer) (b *bench, err error) {
	b = &bench{env: newEnv()}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()
	if b.srv, err = startServer(ctx, cfg.Redis, cfg.Mini, log); err != nil {
		return nil, err
	}
	b.stops = append(b.stops, b.srv.stop)
	env := b.env
	env.Addr, env.Mini = b.srv.Addr, b.srv.mini != nil
	env.Control = b.control(b.srv.Addr)
	env.Controls = []*redis.Client{env.Control}

	if n := nodesNeeded(scs, ims); n > 0 {
		nodes, err := startNodes(ctx, cfg.Nodes, n, env.Mini, log)
		if err != nil {
			return nil, fmt.Errorf("independent masters: %w", err)
		}
		b.stops = append(b.stops, func() { stopAll(nodes) })
		for _, nd := range nodes {
			env.Nodes = append(env.Nodes, nd.Addr)
			env.Controls = append(env.Controls, b.control(nd.Addr))
			env.Mini = env.Mini || nd.mini != nil
		}
	}

	if needed(scs, ims, func(sc *Scenario, _ *Impl) bool { return sc.Cluster }) {
		switch {
		case env.Mini:
			b.noCluster = "miniredis has no cluster mode"
		case !redistest.Available():
			b.noCluster = "no " + redistest.Binary + " on PATH to start a Redis Cluster with"
		default:
			cenv, stop, err := startCluster(env)
			if err != nil {
				return nil, fmt.Errorf("cluster: %w", err)
			}
			b.stops = append(b.stops, stop)
			env.ClusterEnv = cenv
			fmt.Fprintf(log, "bench: Redis Cluster of %d masters at %v\n", clusterMasters, cenv.Cluster)
		}
	}

	if needed(scs, ims, func(sc *Scenario, _ *Impl) bool { return sc.Callgrind }) {
		if err := b.startCallgrind(ctx, log); err != nil {
			return nil, err
		}
	}

	// Peers start only for impls that some selected scenario runs.
	var peered []*Impl
	for _, im := range ims {
		if im.Peer == nil || needed(scs, []*Impl{im}, func(*Scenario, *Impl) bool { return true }) {
			peered = append(peered, im)
		}
	}
	b.stops = append(b.stops, func() { stopPeers(env) })
	var notes []string
	b.ims, notes = startPeers(ctx, env, peered, log)
	b.notes = append(b.notes, notes...)
	return b, nil
}

// startCallgrind starts the redis-server under callgrind of the Callgrind
// scenarios, or says in b.noCallgrind why it cannot.
func (b *bench) startCallgrind(ctx context.Context, log io.Writer) error {
	if b.env.Mini {
		b.noCallgrind = "it counts a real redis-server's instructions, and this run is on miniredis"
		return nil
	}
	if why := callgrindMissing(); why != "" {
		b.noCallgrind = why
		return nil
	}
	fmt.Fprintln(log, "bench: starting redis-server under valgrind's callgrind (slow to start)")
	s, err := startCallgrind(ctx)
	if err != nil {
		return fmt.Errorf("callgrind: %w", err)
	}
	b.stops = append(b.stops, s.stop)
	b.env.CallgrindEnv = b.env.callgrindEnv(s, b.control(s.Addr))
	fmt.Fprintf(log, "bench: redis-server under callgrind at %s\n", s.Addr)
	return nil
}

// control returns a client for the suite's own probes, closed by stop.
func (b *bench) control(addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	b.stops = append(b.stops, func() { _ = c.Close() })
	return c
}

// needed reports whether some selected scenario for which want holds runs
// some selected impl.
func needed(scs []*Scenario, ims []*Impl, want func(*Scenario, *Impl) bool) bool {
	for _, sc := range scs {
		for _, im := range ims {
			if sc.runs(im) && want(sc, im) {
				return true
			}
		}
	}
	return false
}

// nodesNeeded returns how many independent masters the selected scenarios
// need for the selected impls.
func nodesNeeded(scs []*Scenario, ims []*Impl) int {
	n := 0
	for _, sc := range scs {
		if needed([]*Scenario{sc}, ims, func(*Scenario, *Impl) bool { return true }) {
			n = max(n, sc.Nodes)
		}
	}
	return n
}

// skipReason says why sc cannot run on b's servers, or "" when it can.
func (b *bench) skipReason(sc *Scenario) string {
	switch {
	case sc.Replication && b.env.Mini:
		return "miniredis has no replication"
	case sc.Cluster && b.env.ClusterEnv == nil:
		return b.noCluster
	case sc.Callgrind && b.env.CallgrindEnv == nil:
		return b.noCallgrind
	}
	return ""
}

// implsOf returns the impls of b that sc runs.
func (b *bench) implsOf(sc *Scenario) []*Impl {
	return slices.DeleteFunc(slices.Clone(b.ims), func(im *Impl) bool { return !sc.runs(im) })
}
