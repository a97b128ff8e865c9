package redistest

import (
	"context"
	"net"
	"testing"
)

// StartReplicaVia starts a redis-server that replicates master through
// addr, a proxy in front of master's port, so that a test can cut or slow
// the replication link alone. It returns, as [StartReplica] does, once the
// link is up and master counts the replica among its connected replicas.
// The replica is killed by t.Cleanup.
func StartReplicaVia(t testing.TB, master *Server, addr string) *Server {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("redistest: replica via %q: %v", addr, err)
	}
	s := StartServer(t, "--replicaof", host, port)
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	if err := WaitReplicaLinked(ctx, master, s); err != nil {
		t.Fatal(err)
	}
	return s
}
