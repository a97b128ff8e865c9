package redistest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestLaunch(t *testing.T) {
	Require(t)
	master, err := Launch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer master.Kill()
	replica, err := Launch(t.TempDir(), "--replicaof", Host, strconv.Itoa(master.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: master.Addr(), DialTimeout: clientDialTimeout})
	defer c.Close()
	if err := c.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := WaitReplicaLinked(ctx, master, replica); err != nil {
		t.Fatal(err)
	}
	replica.Stop()
	if replica.Running() {
		t.Error("replica still running after Stop")
	}
	master.Kill()
	if err := ping(master.Addr(), 100*time.Millisecond); err == nil {
		t.Error("master still answers after Kill")
	}
}

func TestLaunchCluster(t *testing.T) {
	Require(t)
	c, err := LaunchCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if len(c.Addrs()) != 3 {
		t.Fatalf("%d masters, want 3", len(c.Addrs()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: clientDialTimeout})
	defer cc.Close()
	if err := cc.Set(ctx, "launch", "ok", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	c.Kill()
	for _, s := range c.Nodes() {
		if s.Running() {
			t.Errorf("node %s still running after Kill", s.Addr())
		}
	}
}
