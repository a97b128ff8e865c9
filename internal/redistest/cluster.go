package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slotCount is the number of hash slots of a Redis Cluster.
const slotCount = 16384

// formTimeout bounds the formation of a cluster, from the first CLUSTER
// MEET until a cluster client can write to every master.
const formTimeout = 30 * time.Second

// Cluster is a throwaway Redis Cluster of masters without replicas, on
// 127.0.0.1. Its hash slots are split evenly across its masters.
type Cluster struct {
	nodes []*Server
}

// StartCluster starts a Redis Cluster of the given number of masters, each a
// redis-server in cluster mode with a data directory under t.TempDir. It
// returns once every node reports cluster_state:ok and agrees on the owner
// of every slot, and a cluster client has written and read a key in the
// slots of every master. The nodes are killed by t.Cleanup.
//
// StartCluster skips or fails t as [Require] does when redis-server is not
// installed.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	Require(t)
	c, err := startCluster(t.TempDir(), masters)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	return c
}

// startCluster starts and forms a cluster with node directories under dir.
// On error it kills the nodes it started.
func startCluster(dir string, masters int) (*Cluster, error) {
	if masters < 1 || masters > slotCount {
		return nil, fmt.Errorf("redistest: cluster of %d masters", masters)
	}
	c := &Cluster{}
	for i := 0; i < masters; i++ {
		nodeDir := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			c.kill()
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s, err := startServer(nodeDir, nil, true)
		if err != nil {
			c.kill()
			return nil, err
		}
		c.nodes = append(c.nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), formTimeout)
	defer cancel()
	if err := c.form(ctx); err != nil {
		c.kill()
		return nil, fmt.Errorf("redistest: form cluster of %d masters at %v: %w", masters, c.Addrs(), err)
	}
	return c, nil
}

// slotRange returns the first and last slot of master i of n.
func slotRange(i, n int) (first, last int) {
	return i * slotCount / n, (i+1)*slotCount/n - 1
}

// form assigns the slots, introduces the nodes to each other and waits
// until the cluster serves every slot.
func (c *Cluster) form(ctx context.Context) error {
	clients := make([]*redis.Client, len(c.nodes))
	for i, s := range c.nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: clientDialTimeout})
		defer clients[i].Close()
	}
	for i, cl := range clients {
		// Distinct epochs, set as redis-cli --cluster create does, spare
		// the nodes from resolving epoch collisions after they meet.
		if err := cl.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", c.nodes[i].Addr(), err)
		}
		first, last := slotRange(i, len(c.nodes))
		if err := cl.ClusterAddSlotsRange(ctx, first, last).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", first, last, c.nodes[i].Addr(), err)
		}
	}
	// Every node meets every other node: meeting only the first one, as
	// redis-cli does, leaves the rest to gossip, which can take seconds
	// more. The bus port is not the default port+10000, so MEET names it.
	for i := range clients {
		for _, peer := range c.nodes[:i] {
			if err := clients[i].Do(ctx, "CLUSTER", "MEET", Host, peer.port, peer.busPort).Err(); err != nil {
				return fmt.Errorf("CLUSTER MEET %s from %s: %w", peer.Addr(), c.nodes[i].Addr(), err)
			}
		}
	}
	if err := poll(ctx, func() error { return c.converged(ctx, clients) }); err != nil {
		return fmt.Errorf("cluster did not converge within %v: %w", formTimeout, err)
	}
	if err := poll(ctx, func() error { return c.probe(ctx, clients[0]) }); err != nil {
		return fmt.Errorf("cluster client could not reach every master within %v: %w", formTimeout, err)
	}
	return nil
}

// poll calls f every 50ms until it succeeds or ctx is done, and then returns
// the last error of f.
func poll(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// converged reports, as a nil error, whether every node says the cluster is
// ok, knows every node and agrees with the others on every slot's owner.
func (c *Cluster) converged(ctx context.Context, clients []*redis.Client) error {
	n := strconv.Itoa(len(c.nodes))
	want := map[string]string{
		"cluster_state":          "ok",
		"cluster_slots_assigned": strconv.Itoa(slotCount),
		"cluster_slots_ok":       strconv.Itoa(slotCount),
		"cluster_known_nodes":    n,
		"cluster_size":           n,
	}
	var layout string
	for i, cl := range clients {
		address := c.nodes[i].Addr()
		info, err := cl.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER INFO on %s: %w", address, err)
		}
		fields := parseInfo(info)
		for key, value := range want {
			if fields[key] != value {
				return fmt.Errorf("%s reports %s:%s, want %s", address, key, fields[key], value)
			}
		}
		//lint:ignore SA1019 CLUSTER SLOTS answers on every Redis this runs against; CLUSTER SHARDS needs 7.0
		slots, err := cl.ClusterSlots(ctx).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER SLOTS on %s: %w", address, err)
		}
		l := slotLayout(slots)
		if i == 0 {
			layout = l
		} else if l != layout {
			return fmt.Errorf("%s sees slots %s, but %s sees %s", address, l, c.nodes[0].Addr(), layout)
		}
	}
	return nil
}

// parseInfo parses the field:value lines of an INFO-style reply.
func parseInfo(info string) map[string]string {
	fields := make(map[string]string)
	for _, line := range strings.Split(info, "\n") {
		if key, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[key] = value
		}
	}
	return fields
}

// slotLayout renders a CLUSTER SLOTS reply canonically, for comparison.
func slotLayout(slots []redis.ClusterSlot) string {
	parts := make([]string, 0, len(slots))
	for _, s := range slots {
		owner := "?"
		if len(s.Nodes) > 0 {
			owner = s.Nodes[0].Addr
		}
		parts = append(parts, fmt.Sprintf("%d-%d@%s", s.Start, s.End, owner))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// probe writes, reads and deletes one key in the slots of every master
// through a fresh cluster client.
func (c *Cluster) probe(ctx context.Context, node *redis.Client) error {
	keys := make([]string, len(c.nodes))
	missing := len(keys)
	for i := 0; missing > 0; i++ {
		if i > 100*len(keys)+1000 {
			return errors.New("found no probe key for some master")
		}
		key := "redistest:probe:" + strconv.Itoa(i)
		slot, err := node.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER KEYSLOT: %w", err)
		}
		m := c.masterOf(int(slot))
		if keys[m] == "" {
			keys[m] = key
			missing--
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: clientDialTimeout})
	defer cc.Close()
	for m, key := range keys {
		if err := cc.Set(ctx, key, "ok", time.Minute).Err(); err != nil {
			return fmt.Errorf("SET %s (master %s): %w", key, c.nodes[m].Addr(), err)
		}
		if got, err := cc.Get(ctx, key).Result(); err != nil || got != "ok" {
			return fmt.Errorf("GET %s (master %s) = %q, %v", key, c.nodes[m].Addr(), got, err)
		}
		if err := cc.Del(ctx, key).Err(); err != nil {
			return fmt.Errorf("DEL %s (master %s): %w", key, c.nodes[m].Addr(), err)
		}
	}
	return nil
}

// masterOf returns the index of the master that owns slot.
func (c *Cluster) masterOf(slot int) int {
	for i := range c.nodes {
		if _, last := slotRange(i, len(c.nodes)); slot <= last {
			return i
		}
	}
	return len(c.nodes) - 1
}

// Addrs returns the host:port addresses of the masters, in the order of
// their slot ranges.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Nodes returns the masters, in the order of their slot ranges, so that a
// test can stop, kill or pause one of them.
func (c *Cluster) Nodes() []*Server {
	return slices.Clone(c.nodes)
}

// Client returns a cluster client of the cluster with a short DialTimeout,
// after applying opts to its options. The client is closed by t.Cleanup.
func (c *Cluster) Client(t testing.TB, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	o := &redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: clientDialTimeout}
	for _, opt := range opts {
		opt(o)
	}
	cc := redis.NewClusterClient(o)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// kill kills every node of the cluster.
func (c *Cluster) kill() {
	for _, s := range c.nodes {
		s.Kill()
	}
}
