package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// StartSentinel starts a Redis Sentinel that monitors master under the
// name masterName, alone (quorum 1), and returns once it monitors it. The
// sentinel is killed by t.Cleanup. It skips or fails t as [Require] does
// when redis-server is not installed.
func StartSentinel(t testing.TB, master *Server, masterName string) *Server {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf") // a sentinel rewrites its file
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := start(dir, []string{
		"--sentinel", "monitor", masterName, Host, strconv.Itoa(master.Port()), "1",
		"--sentinel", "down-after-milliseconds", masterName, "2000",
		"--sentinel", "failover-timeout", masterName, "10000",
	}, false, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// SentinelFailover asks sentinel to fail masterName, served by from, over
// to its replica to (SENTINEL FAILOVER), waits until the sentinel names to
// as the master and to says it is one, then makes from a replica of to, as
// the sentinel would on its next look, and waits until it has synced: the
// new master then has a replica to acknowledge synced writes again.
func SentinelFailover(ctx context.Context, sentinel *Server, masterName string, from, to *Server) error {
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr(), DialTimeout: clientDialTimeout})
	defer sc.Close()
	tc, fc := nodeClient(to), nodeClient(from)
	defer tc.Close()
	defer fc.Close()
	ctx, cancel := context.WithTimeout(ctx, FailoverTimeout)
	defer cancel()
	// A master waits 5s by default before a diskless full sync.
	if err := tc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return fmt.Errorf("redistest: %s: %w", to.Addr(), err)
	}
	// A sentinel refuses a failover until it has seen the replica (INFO
	// every 10s at first): ask until it accepts.
	err := poll(ctx, func() error { return sc.Failover(ctx, masterName).Err() })
	if err != nil {
		return fmt.Errorf("redistest: SENTINEL FAILOVER %s: %w", masterName, err)
	}
	err = poll(ctx, func() error {
		addr, err := sc.GetMasterAddrByName(ctx, masterName).Result()
		if err != nil {
			return err
		}
		if got := addr[0] + ":" + addr[1]; got != to.Addr() {
			return fmt.Errorf("sentinel names %s as the master, not %s", got, to.Addr())
		}
		role, err := tc.Do(ctx, "ROLE").Slice()
		if err != nil {
			return err
		}
		if len(role) == 0 || role[0] != "master" {
			return fmt.Errorf("%s is not a master yet: %v", to.Addr(), role)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redistest: failover of %s to %s: %w", masterName, to.Addr(), err)
	}
	if err := fc.ReplicaOf(ctx, Host, strconv.Itoa(to.Port())).Err(); err != nil {
		return fmt.Errorf("redistest: REPLICAOF on the old master %s: %w", from.Addr(), err)
	}
	return WaitReplicaLinked(ctx, to, from)
}
