package redistest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// syncTimeout bounds the wait for a new replica's first full sync.
const syncTimeout = 30 * time.Second

// StartReplica starts a redis-server that replicates master, as
// [StartServer] does, and returns once the replica reports its link to the
// master up and the master counts it among its connected replicas. The
// replica is killed by t.Cleanup.
func StartReplica(t testing.TB, master *Server) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	// A master waits 5s by default before a diskless full sync, in case
	// more replicas come: not here.
	mc := redis.NewClient(&redis.Options{Addr: master.Addr(), DialTimeout: clientDialTimeout})
	err := mc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err()
	mc.Close()
	if err != nil {
		t.Fatalf("redistest: %s: %v", master.Addr(), err)
	}
	s := StartServer(t, "--replicaof", Host, strconv.Itoa(master.Port()))
	if err := WaitReplicaLinked(ctx, master, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// WaitReplicaLinked waits until replica reports master_link_status:up,
// master lists replica as online among its connected replicas and a write
// on master is acknowledged (see [InStep]), or ctx ends.
func WaitReplicaLinked(ctx context.Context, master, replica *Server) error {
	mc := redis.NewClient(&redis.Options{Addr: master.Addr(), DialTimeout: clientDialTimeout})
	defer mc.Close()
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr(), DialTimeout: clientDialTimeout})
	defer rc.Close()
	err := poll(ctx, func() error {
		info, err := rc.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if f := parseInfo(info); f["master_link_status"] != "up" {
			return fmt.Errorf("replica %s: master_link_status:%s", replica.Addr(), f["master_link_status"])
		}
		info, err = mc.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		f := parseInfo(info)
		n, _ := strconv.Atoi(f["connected_slaves"])
		for i := 0; i < n; i++ {
			v := f["slave"+strconv.Itoa(i)]
			if fields := strings.Split(v, ","); slices.Contains(fields, "port="+strconv.Itoa(replica.Port())) &&
				slices.Contains(fields, "state=online") {
				return nil
			}
		}
		return fmt.Errorf("master %s does not list replica %s online yet", master.Addr(), replica.Addr())
	})
	if err == nil {
		err = poll(ctx, func() error { return InStep(ctx, mc, 1) })
	}
	if err != nil {
		return fmt.Errorf("redistest: replica %s of %s not linked within the deadline: %w", replica.Addr(), master.Addr(), err)
	}
	return nil
}

// inStepKey is the key InStep writes and deletes in one transaction.
const inStepKey = "redistest:in-step"

// InStep reports, as nil, that n replicas of c's server acknowledge a
// write within 100ms. A replica that has just finished a diskless sync is
// listed state=online before it takes the command stream (its first
// acknowledgement comes with its once-a-second cron), so a WAIT on that
// master can block for up to a second after the replica is "online".
// The write, a SET and a DEL of one key in MULTI/EXEC, leaves no key.
func InStep(ctx context.Context, c *redis.Client, n int) error {
	// WAIT counts the acknowledgements of its connection's writes: a
	// keyless Watch pins one (see the library's synced writes on Conn).
	var acked int
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		if _, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, inStepKey, 1, 0)
			p.Del(ctx, inStepKey)
			return nil
		}); err != nil {
			return err
		}
		var err error
		acked, err = tx.Do(ctx, "WAIT", n, 100).Int()
		return err
	})
	if err == nil && acked < n {
		err = fmt.Errorf("%d replicas of %s acknowledged a write, want %d", acked, c.Options().Addr, n)
	}
	return err
}

// Freeze stops the server with SIGSTOP until Thaw: it keeps its
// connections but answers nothing (a frozen replica acknowledges no
// writes, so WAIT on its master times out). Freeze does nothing when the
// server is not running or the platform has no SIGSTOP.
func (s *Server) Freeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && canPause {
		s.proc.signal(sigStop)
	}
}

// Thaw resumes a server stopped by Freeze.
func (s *Server) Thaw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && canPause {
		s.proc.signal(sigCont)
	}
}
