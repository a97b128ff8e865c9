package mutex_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
)

// A holder learns that its server forgot the lock within a second of the
// server being back, not at its next renewal (10s with the default 30s
// watchdog): a server without persistence is killed and started again
// empty, and another client takes the lock at once.
func TestMutex_lossToldOnRestart(t *testing.T) {
	s := redistest.StartServer(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the watch is set up off Lock's path
	s.CrashRestart(t)
	back := time.Now()
	other := mutex.New(client(t, s), name)
	if ok, err := other.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("another client's TryLock after the restart = %v, %v", ok, err)
	}
	select {
	case <-m.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the old holder was not told within 3s of the server's return")
	}
	told := time.Since(back)
	t.Logf("the old holder was told %v after the server was back", told)
	if told > time.Second {
		t.Errorf("the old holder was told %v after the server was back, want within 1s", told)
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) || !strings.Contains(err.Error(), "reached again") {
		t.Errorf("Err = %v, want ErrLost saying the server was reached again", err)
	}
	_ = other.Unlock(ctx)
}

// A server that kept the lock through its restart (persistence on every
// write) costs its holder nothing: the recheck finds the hold, and
// renews it.
func TestMutex_restartKeepsDurableHold(t *testing.T) {
	s := redistest.StartDurableServer(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	s.CrashRestart(t)
	select {
	case <-m.Done():
		t.Fatalf("a hold the server kept was reported lost: %v", m.Err())
	case <-time.After(1500 * time.Millisecond):
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock after the restart = %v", err)
	}
}

// The same on a Redis Cluster, with sharded pub/sub: the master that
// carries the lock is killed and started again empty (its cluster
// identity kept). It answers CLUSTERDOWN until its peers agree again
// (about 2s here); the holder is told within a second of the master
// serving again, when another client can take the lock.
func TestMutex_lossToldOnClusterRestart(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	ctx := context.Background()
	name := lockName(t)
	c := locktest.ClusterClient(t, cl)
	m := mutex.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	master, err := c.MasterForKey(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var node *redistest.Server
	for _, n := range cl.Nodes() {
		if n.Addr() == master.Options().Addr {
			node = n
		}
	}
	if node == nil {
		t.Fatalf("no node at %s", master.Options().Addr)
	}
	told := make(chan time.Time, 1)
	go func() { <-m.Done(); told <- time.Now() }()
	time.Sleep(100 * time.Millisecond) // the watch is set up off Lock's path
	node.CrashRestart(t)
	other := mutex.New(locktest.ClusterClient(t, cl), name)
	var serving time.Time
	for deadline := time.Now().Add(10 * time.Second); serving.IsZero(); time.Sleep(10 * time.Millisecond) {
		if ok, _ := other.TryLock(ctx, 0); ok {
			serving = time.Now()
		} else if time.Now().After(deadline) {
			t.Fatal("the master did not serve again within 10s")
		}
	}
	select {
	case at := <-told:
		t.Logf("the old holder was told %v after another client took the lock", at.Sub(serving))
		if at.Sub(serving) > time.Second {
			t.Errorf("the old holder was told %v after the master served again, want within 1s", at.Sub(serving))
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the old holder was not told within 3s of the master serving again")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) || !strings.Contains(err.Error(), "reached again") {
		t.Errorf("Err = %v, want ErrLost saying the server was reached again", err)
	}
	_ = other.Unlock(ctx)
}
