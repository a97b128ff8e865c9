package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A server is a Redis the suite runs against.
type server struct {
	Addr string
	Mode string // "external", "embedded" or "miniredis"
	mini *miniredis.Miniredis
	stop func()
}

// miniNote is said wherever miniredis figures are shown.
const miniNote = "MINIREDIS: these figures come from an in-process miniredis (no redis-server was " +
	"found, or -miniredis was given); they are NOT comparable to a real Redis server."

// startServer connects to addr if given, else starts a throwaway
// redis-server from PATH on a free loopback port, else (or when forced) an
// in-process miniredis whose clock follows real time.
func startServer(ctx context.Context, addr string, forceMini bool, log io.Writer) (*server, error) {
	if addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			return nil, fmt.Errorf("redis at %s: %w", addr, err)
		}
		return &server{Addr: addr, Mode: "external", stop: func() {}}, nil
	}
	if !forceMini {
		if !redistest.Available() {
			fmt.Fprintf(log, "bench: no %s on PATH; falling back to miniredis\n", redistest.Binary)
			return startMini()
		}
		s, err := launchRedis()
		if err == nil {
			return s, nil
		}
		fmt.Fprintf(log, "bench: could not start %s (%v); falling back to miniredis\n", redistest.Binary, err)
	}
	return startMini()
}

// launchRedis starts a throwaway redis-server with internal/redistest,
// passing args (such as --replicaof) after its defaults: no persistence,
// 127.0.0.1, a free port, a data directory of its own that stop removes.
func launchRedis(args ...string) (*server, error) {
	dir, err := os.MkdirTemp("", "latchkey-bench-redis-")
	if err != nil {
		return nil, err
	}
	s, err := redistest.Launch(dir, args...)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &server{Addr: s.Addr(), Mode: "embedded", stop: func() {
		s.Stop()
		_ = os.RemoveAll(dir)
	}}, nil
}

// startNodes returns n independent masters for the scenarios that span
// several: the given addresses if any, else throwaway redis-servers, else
// (or when mini is set) miniredis instances.
func startNodes(ctx context.Context, addrs []string, n int, mini bool, log io.Writer) ([]*server, error) {
	var out []*server
	if len(addrs) > 0 {
		if len(addrs) < n {
			return nil, fmt.Errorf("-nodes: %d addresses given, %d needed", len(addrs), n)
		}
		for _, a := range addrs[:n] {
			s, err := startServer(ctx, a, false, log)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	for range n {
		s, err := startServer(ctx, "", mini, io.Discard)
		if err != nil {
			stopAll(out)
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stopAll(ss []*server) {
	for _, s := range ss {
		s.stop()
	}
}

// startMini starts a miniredis and advances its clock with the wall clock,
// since miniredis only expires keys when told that time has passed.
func startMini() (*server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("miniredis: %w", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	})
	return &server{Addr: m.Addr(), Mode: "miniredis", mini: m, stop: func() {
		close(done)
		wg.Wait()
		m.Close()
	}}, nil
}

// clusterMasters is the size of the Redis Cluster of Cluster scenarios.
const clusterMasters = 3

// startCluster starts a throwaway Redis Cluster of clusterMasters masters
// with internal/redistest and returns its Env, whose control clients are
// one per master, and a function that stops it.
func startCluster(parent *Env) (*Env, func(), error) {
	dir, err := os.MkdirTemp("", "latchkey-bench-cluster-")
	if err != nil {
		return nil, nil, err
	}
	c, err := redistest.LaunchCluster(dir, clusterMasters)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	var controls []*redis.Client
	for _, a := range c.Addrs() {
		controls = append(controls, redis.NewClient(&redis.Options{Addr: a}))
	}
	return parent.clusterEnv(c.Addrs(), controls), func() {
		for _, cl := range controls {
			_ = cl.Close()
		}
		c.Kill()
		_ = os.RemoveAll(dir)
	}, nil
}
