package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
)

// The replica scenarios measure what replica sync costs: the same workloads
// as uncontended and hotlock, on the main server with one replica attached
// for the run, latchkey with its default (every acquisition, release and
// renewal waits for the replica, WAIT on the same connection) beside
// latchkey with replica sync off.
func init() {
	register(&Impl{
		Name:  "latchkey-unsynced",
		Kind:  kindUnsynced,
		Rank:  2,
		Color: "#08306b",
		About: "latchkey mutex with WithReplicaSync(0): writes do not wait for replicas; " +
			"otherwise as latchkey.",
		New: func(c *Conn, name string) any {
			return latchkeyMutex{mutex.New(c.Client, name, mutex.WithReplicaSync(0))}
		},
		Close: closeLatchkey,
	})
	both := []string{"latchkey", "latchkey-unsynced"}
	registerScenario(&Scenario{
		Name: "uncontended-replica", Rank: 1, Workers: 1, Also: both, Replication: true,
		About: "uncontended on a master with one replica: latchkey waits for the replica's " +
			"acknowledgement (its default); latchkey-unsynced does not.",
		Run: withReplica(uncontended),
	})
	registerScenario(&Scenario{
		Name: "hotlock-replica", Rank: 13, Workers: 8, Contended: true, Also: both, Replication: true,
		About: "hotlock on a master with one replica: latchkey waits for the replica's " +
			"acknowledgement (its default); latchkey-unsynced does not.",
		Run: withReplica(Load{Workers: 8, Hold: time.Millisecond, Think: time.Millisecond, Capacity: 1}.Run),
	})
}

// kindUnsynced is the kind of latchkey-unsynced, which runs only where a
// scenario names it.
const kindUnsynced Kind = "mutex-unsynced"

// withReplica runs run with a replica of the main server attached: a
// throwaway redis-server replicating it, online before the run starts and
// stopped after.
func withReplica(run func(context.Context, *Env, *Impl, time.Duration) (*Run, error)) func(context.Context, *Env, *Impl, time.Duration) (*Run, error) {
	return func(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
		if env.Mini {
			return nil, errors.New("needs a redis-server: miniredis has no replication")
		}
		host, port, err := net.SplitHostPort(env.Addr)
		if err != nil {
			return nil, err
		}
		if err := env.Control.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
			return nil, err
		}
		rep, err := launchRedis("--replicaof", host, port)
		if err != nil {
			return nil, fmt.Errorf("replica: %w", err)
		}
		defer rep.stop()
		if err := waitOnline(ctx, env, 30*time.Second); err != nil {
			return nil, err
		}
		return run(ctx, env, im, d)
	}
}

// waitOnline waits until the main server's one replica acknowledges a
// write (redistest.InStep): a replica listed online may not take the
// command stream yet, and a synced write would wait for it.
func waitOnline(ctx context.Context, env *Env, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		info, err := env.Control.Info(ctx, "replication").Result()
		if n := strings.Count(info, "state=online"); err == nil && n != 1 {
			err = fmt.Errorf("%d replicas online, want 1", n)
		}
		if err == nil {
			err = redistest.InStep(ctx, env.Control, 1)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no replica in step within %v (%v)", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
