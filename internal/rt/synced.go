package rt

import (
	"context"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// A synced write: the script and WAIT on one connection of the key's
// master, as Redisson's synced eval (see replicas.go for the count).

// movedRetries bounds how often a synced write is sent again to a cluster
// master after being told that the slot moved.
const movedRetries = 3

// execSynced runs call and WAIT on the master of its first key, if that
// master has replicas.
func execSynced(ctx context.Context, client redis.UniversalClient, timeout time.Duration, call scripts.Request) Reply {
	for attempt := 0; ; attempt++ {
		node, err := masterFor(ctx, client, call.Keys[0])
		if err != nil {
			return Failed(ctx, err)
		}
		reps, again, err := replicasOf(ctx, client, node)
		if err != nil {
			return Failed(ctx, err)
		}
		if reps == 0 && again == nil {
			return Reply{Cmd: call.Eval(ctx, node)}
		}
		r := pipeWait(ctx, client, node, reps, again, waitFor(node, timeout), call)
		if attempt < movedRetries && isMoved(r.Err()) {
			// The write did not run: the slot is elsewhere now.
			if cc, ok := client.(*redis.ClusterClient); ok {
				cc.ReloadState(ctx)
			}
			if !sleep(ctx, time.Duration(attempt+1)*50*time.Millisecond) {
				return r
			}
			continue
		}
		if r.Err() == nil && r.Acked != r.Replicas {
			recheck(client, node)
		}
		return r
	}
}

// pipeWait sends the script and WAIT for reps replicas (none if reps is 0)
// on one connection of node, in one round trip. A NOSCRIPT answer means
// the script did not run: it is sent again with EVAL, which also loads it.
// With again, INFO replication goes first, and a replica that it finds
// beyond reps is waited for with one more WAIT on the same connection.
func pipeWait(ctx context.Context, client redis.UniversalClient, node *redis.Client, reps int, again *recount, timeout time.Duration, call scripts.Request) Reply {
	var info *redis.StringCmd
	var ev, wait *redis.Cmd
	send := func(pipeline func() redis.Pipeliner, eval bool) {
		pipe := pipeline()
		if again != nil {
			info = pipe.Info(ctx, "replication")
		}
		ev = call.Command(ctx, eval)
		_ = pipe.Process(ctx, ev)
		if reps > 0 {
			wait = pipe.Do(ctx, "WAIT", reps, scripts.Ms(timeout))
		}
		_, _ = pipe.Exec(ctx)
	}
	run := func(pipeline func() redis.Pipeliner) {
		send(pipeline, false)
		if scripts.NoScript(ev.Err()) {
			send(pipeline, true)
		}
	}
	if again == nil {
		run(node.Pipeline)
	} else {
		// WAIT counts the acknowledgements of its connection's writes: a
		// second WAIT goes on the same connection. A keyless Watch pins one
		// (and sends no WATCH); Conn would too, but go-redis v9.23 lets a
		// Conn's first handshake race with its client's on their shared
		// options, which Watch's Tx copies under the client's lock.
		_ = node.Watch(ctx, func(tx *redis.Tx) error {
			run(tx.Pipeline)
			if n := again.done(info.Result()); n > reps && ev.Err() == nil {
				reps, wait = n, tx.Do(ctx, "WAIT", n, scripts.Ms(timeout))
			}
			return nil
		})
	}
	if ev.Err() != nil || reps == 0 {
		return Reply{Cmd: ev}
	}
	r := Reply{Cmd: ev, Replicas: reps, Timeout: timeout}
	n, err := wait.Int()
	switch {
	case err == nil:
		r.Acked = n
	case isUnknownCommand(err):
		noWait(client, node) // a server without WAIT: never ask it again
		r.Replicas = 0
	}
	return r
}

// waitFor returns how long WAIT may block on node: timeout, but no more
// than three quarters of the client's read timeout, so that a WAIT that
// runs out answers with its count instead of the read timing out first.
func waitFor(node *redis.Client, timeout time.Duration) time.Duration {
	read := node.Options().ReadTimeout
	switch {
	case read == 0:
		read = 3 * time.Second // go-redis's default
	case read < 0:
		return timeout // no read deadline
	}
	return min(timeout, read*3/4)
}

func isMoved(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}

// sleep waits for d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

type undoKey struct{}

// Undo returns a context, not cancelled with ctx, for a write that undoes
// one that failed (an acquisition no replica acknowledged, a grant that
// landed after its caller gave up). Exec sends no WAIT with it: the undo
// should not keep the caller waiting for replicas a second time, and it
// reaches them in order after what it undoes.
func Undo(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), undoKey{}, true)
}

// DefaultSync is how long a write waits for the replicas of its master
// unless told otherwise: Redisson's slavesSyncTimeout.
const DefaultSync = time.Second

// A Sync is a primitive's replica-sync setting: DefaultSync until set.
type Sync struct {
	d   time.Duration
	set bool
}

// Set sets the timeout; 0 turns replica sync off. It panics, naming pkg,
// if d is negative.
func (s *Sync) Set(pkg string, d time.Duration) {
	if d < 0 {
		panic(pkg + ": New: WithReplicaSync: negative timeout")
	}
	s.d, s.set = d, true
}

// Timeout returns the longest a write waits for replicas; 0 for none.
func (s Sync) Timeout() time.Duration {
	if !s.set {
		return DefaultSync
	}
	return s.d
}
