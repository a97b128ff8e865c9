package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ReplicatedCluster is a throwaway Redis Cluster on 127.0.0.1 whose every
// master has one replica, for failover tests. Roles change as the tests
// fail masters over: ask [ReplicatedCluster.MasterOf] and
// [ReplicatedCluster.ReplicaOf] rather than remembering them.
type ReplicatedCluster struct {
	*Cluster           // the masters the cluster was formed with
	all      []*Server // every node: the first masters, then their replicas
}

// StartReplicatedCluster starts a Redis Cluster of the given number of
// masters, as [StartCluster] does, then one replica for each, and returns
// once every replica's link to its master is up and every node reports
// cluster_state:ok. Every node is killed by t.Cleanup.
func StartReplicatedCluster(t testing.TB, masters int) *ReplicatedCluster {
	t.Helper()
	c := StartCluster(t, masters)
	rc := &ReplicatedCluster{Cluster: c, all: c.Nodes()}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), formTimeout)
	defer cancel()
	seed := c.nodes[0]
	for i, m := range c.nodes {
		nodeDir := filepath.Join(dir, "replica"+strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := startServer(nodeDir, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Kill)
		rc.all = append(rc.all, s)
		if err := join(ctx, s, seed, m); err != nil {
			t.Fatalf("redistest: replica %s of %s: %v", s.Addr(), m.Addr(), err)
		}
	}
	if err := rc.WaitHealthy(ctx); err != nil {
		t.Fatalf("redistest: replicated cluster: %v", err)
	}
	return rc
}

// join introduces s to the cluster through seed and makes it a replica of
// master once it knows master.
func join(ctx context.Context, s, seed, master *Server) error {
	cl := nodeClient(s)
	defer cl.Close()
	if err := cl.Do(ctx, "CLUSTER", "MEET", Host, seed.port, seed.busPort).Err(); err != nil {
		return fmt.Errorf("CLUSTER MEET: %w", err)
	}
	mc := nodeClient(master)
	defer mc.Close()
	id, err := mc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("CLUSTER MYID: %w", err)
	}
	return poll(ctx, func() error { return cl.Do(ctx, "CLUSTER", "REPLICATE", id).Err() })
}

func nodeClient(s *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: clientDialTimeout})
}

// All returns every node of the cluster, masters and replicas alike.
func (rc *ReplicatedCluster) All() []*Server { return append([]*Server(nil), rc.all...) }

// WaitHealthy waits until every running node reports cluster_state:ok and
// every slot served, and every master serving slots has a replica whose
// link to it is up, or ctx ends.
func (rc *ReplicatedCluster) WaitHealthy(ctx context.Context) error {
	return poll(ctx, func() error {
		masters := 0
		for _, s := range rc.all {
			if !s.Running() {
				continue
			}
			cl := nodeClient(s)
			f, err := info(ctx, cl, "CLUSTER", "INFO")
			if err == nil && (f["cluster_state"] != "ok" || f["cluster_slots_ok"] != strconv.Itoa(slotCount)) {
				err = fmt.Errorf("%s: cluster_state:%s, cluster_slots_ok:%s", s.Addr(), f["cluster_state"], f["cluster_slots_ok"])
			}
			if err == nil {
				err = replicated(ctx, cl, s)
			}
			if err == nil {
				f, err = info(ctx, cl, "INFO", "replication")
			}
			cl.Close()
			switch {
			case err != nil:
				return err
			case f["role"] == "master" && f["connected_slaves"] == "0":
				// A master without a replica is fine only if it serves
				// no slots (a restarted node may briefly be one).
				if rc.servesSlots(ctx, s) {
					return fmt.Errorf("%s serves slots without a replica", s.Addr())
				}
			case f["role"] == "master":
				masters++
			case f["master_link_status"] != "up":
				return fmt.Errorf("replica %s: master_link_status:%s", s.Addr(), f["master_link_status"])
			}
		}
		if masters < len(rc.nodes) {
			return fmt.Errorf("%d masters with replicas, want %d", masters, len(rc.nodes))
		}
		return nil
	})
}

// replicated reports, as nil, that s (through cl) sees a replica beside
// the master of every slot range.
func replicated(ctx context.Context, cl *redis.Client, s *Server) error {
	//lint:ignore SA1019 CLUSTER SLOTS answers on every Redis this runs against; CLUSTER SHARDS needs 7.0
	slots, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return err
	}
	for _, sl := range slots {
		if len(sl.Nodes) < 2 {
			return fmt.Errorf("%s sees slots %d-%d without a replica", s.Addr(), sl.Start, sl.End)
		}
	}
	return nil
}

// info runs an INFO-style command on cl and parses its reply.
func info(ctx context.Context, cl *redis.Client, args ...any) (map[string]string, error) {
	text, err := cl.Do(ctx, args...).Text()
	if err != nil {
		return nil, err
	}
	return parseInfo(text), nil
}

// servesSlots reports whether a live node says s owns slots.
func (rc *ReplicatedCluster) servesSlots(ctx context.Context, s *Server) bool {
	slots, err := rc.slots(ctx)
	if err != nil {
		return true
	}
	for _, sl := range slots {
		if len(sl.Nodes) > 0 && sl.Nodes[0].Addr == s.Addr() {
			return true
		}
	}
	return false
}

// slots returns CLUSTER SLOTS as a running node sees it.
func (rc *ReplicatedCluster) slots(ctx context.Context) ([]redis.ClusterSlot, error) {
	var lastErr error
	for _, s := range rc.all {
		if !s.Running() {
			continue
		}
		cl := nodeClient(s)
		//lint:ignore SA1019 CLUSTER SLOTS answers on every Redis this runs against; CLUSTER SHARDS needs 7.0
		slots, err := cl.ClusterSlots(ctx).Result()
		cl.Close()
		if err == nil {
			return slots, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("no node answered CLUSTER SLOTS: %v", lastErr)
}

// MasterOf returns the node that serves key's slot, as a running node sees
// it, and that node's replica.
func (rc *ReplicatedCluster) MasterOf(ctx context.Context, key string) (master, replica *Server, err error) {
	slots, err := rc.slots(ctx)
	if err != nil {
		return nil, nil, err
	}
	slot := Slot(key)
	for _, sl := range slots {
		if slot < sl.Start || slot > sl.End || len(sl.Nodes) == 0 {
			continue
		}
		master = rc.byAddr(sl.Nodes[0].Addr)
		for _, n := range sl.Nodes[1:] {
			if replica = rc.byAddr(n.Addr); replica != nil {
				break
			}
		}
		if master == nil || replica == nil {
			return nil, nil, fmt.Errorf("slot %d: nodes %v, want a known master and replica", slot, sl.Nodes)
		}
		return master, replica, nil
	}
	return nil, nil, fmt.Errorf("no node serves slot %d", slot)
}

func (rc *ReplicatedCluster) byAddr(addr string) *Server {
	for _, s := range rc.all {
		if s.Addr() == addr {
			return s
		}
	}
	return nil
}

// Slot returns the Redis Cluster hash slot of key.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % slotCount)
}

// crc16 is the CRC-16/XMODEM of Redis Cluster's key hashing.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
