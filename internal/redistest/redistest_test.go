package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func closed(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
	}
	return err != nil
}

func TestStartServerPing(t *testing.T) {
	s := redistest.StartServer(t)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.Port() == 0 {
		t.Fatalf("Addr() = %q, Port() = %d", s.Addr(), s.Port())
	}
	c := s.Client(t)
	if got, err := c.Ping(ctx(t)).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	// The server runs without persistence and with DEBUG allowed.
	cfg, err := c.ConfigGet(ctx(t), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"save": "", "appendonly": "no", "enable-debug-command": "local"} {
		if cfg[key] != want {
			t.Errorf("CONFIG GET %s = %q, want %q", key, cfg[key], want)
		}
	}
}

func TestStartServerExtraArgs(t *testing.T) {
	s := redistest.StartServer(t, "--maxmemory", "10mb")
	got, err := s.Client(t).ConfigGet(ctx(t), "maxmemory").Result()
	if err != nil || got["maxmemory"] != strconv.Itoa(10<<20) {
		t.Fatalf("CONFIG GET maxmemory = %v, %v", got, err)
	}
}

func TestStopRestart(t *testing.T) {
	s := redistest.StartServer(t)
	addr := s.Addr()
	c := s.Client(t)
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop() // idempotent
	if !closed(addr) {
		t.Fatalf("%s still accepts connections after Stop", addr)
	}
	if s.Running() {
		t.Fatal("Running() after Stop")
	}
	s.Restart(t)
	if s.Addr() != addr {
		t.Fatalf("Addr() after Restart = %s, want %s", s.Addr(), addr)
	}
	// The old client reconnects to the restarted, empty server.
	if err := c.Get(ctx(t), "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET k after Restart: err = %v, want redis.Nil", err)
	}
}

func TestKillRestart(t *testing.T) {
	s := redistest.StartServer(t)
	c := s.Client(t)
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	s.Kill() // idempotent
	if !closed(s.Addr()) {
		t.Fatalf("%s still accepts connections after Kill", s.Addr())
	}
	s.Restart(t)
	if n, err := c.DBSize(ctx(t)).Result(); err != nil || n != 0 {
		t.Fatalf("DBSIZE after Restart = %d, %v; want 0", n, err)
	}
	s.Restart(t) // restarting a running server stops it first
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestPause(t *testing.T) {
	s := redistest.StartServer(t)
	c := s.Client(t)
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	start := time.Now()
	s.Pause(d)
	if time.Since(start) > d/2 {
		t.Fatalf("Pause blocked for %v", time.Since(start))
	}
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < d*3/4 {
		t.Fatalf("PING during a %v pause answered after %v", d, elapsed)
	}
}

func TestStartServers(t *testing.T) {
	servers := redistest.StartServers(t, 3)
	seen := make(map[string]bool)
	for _, s := range servers {
		if seen[s.Addr()] {
			t.Fatalf("address %s used twice", s.Addr())
		}
		seen[s.Addr()] = true
		if err := s.Client(t).Ping(ctx(t)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("got %d servers, want 3", len(seen))
	}
}

// writeKeys writes 100 keys, which land in the slots of every master of a
// small cluster.
func writeKeys(ctx context.Context, c *redis.ClusterClient, prefix string) error {
	for i := 0; i < 100; i++ {
		if err := c.Set(ctx, prefix+strconv.Itoa(i), i, time.Minute).Err(); err != nil {
			return err
		}
	}
	return nil
}

// checkCluster writes keys through a cluster client and checks that every
// master received some.
func checkCluster(t *testing.T, cl *redistest.Cluster, masters int) {
	if got := len(cl.Addrs()); got != masters {
		t.Fatalf("Addrs() has %d entries, want %d", got, masters)
	}
	c := cl.Client(t)
	prefix := t.Name() + ":"
	if err := writeKeys(ctx(t), c, prefix); err != nil {
		t.Fatal(err)
	}
	var count atomic.Int32
	err := c.ForEachMaster(ctx(t), func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("master %s holds no key", m.Options().Addr)
		}
		count.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := count.Load(); got != int32(masters) {
		t.Fatalf("ForEachMaster visited %d masters, want %d", got, masters)
	}
	// Each node owns the slots of the keys it holds.
	for i, node := range cl.Nodes() {
		nc := node.Client(t)
		keys, err := nc.Keys(ctx(t), prefix+"*").Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("KEYS on node %d = %v, %v", i, keys, err)
		}
		slot, err := nc.ClusterKeySlot(ctx(t), keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := int64(i*16384/masters), int64((i+1)*16384/masters); slot < lo || slot >= hi {
			t.Fatalf("node %d holds %s in slot %d, outside [%d,%d)", i, keys[0], slot, lo, hi)
		}
	}
}

func TestStartCluster(t *testing.T) {
	t.Parallel()
	start := time.Now()
	cl := redistest.StartCluster(t, 3)
	t.Logf("3-master cluster formed in %v", time.Since(start))
	checkCluster(t, cl, 3)
}

func TestClusterNodeRestart(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3)
	c := cl.Client(t)
	node := cl.Nodes()[1]
	node.Kill()
	start := time.Now()
	node.Restart(t)
	// The node keeps its nodes.conf and so its slots, but Redis refuses
	// writes for about 2 seconds after a master starts.
	for {
		err := writeKeys(ctx(t), c, t.Name()+":")
		if err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("cluster not writable 20s after a node restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("cluster writable %v after restarting a node", time.Since(start))
	checkCluster(t, cl, 3)
}

func TestSharedCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.SharedCluster(t)
	if again := redistest.SharedCluster(t); again != cl {
		t.Fatal("SharedCluster returned a different cluster")
	}
	checkCluster(t, cl, 3)
}

func TestSharedServer(t *testing.T) {
	s := redistest.SharedServer(t)
	if again := redistest.SharedServer(t); again != s {
		t.Fatal("SharedServer returned a different server")
	}
	if err := s.Client(t).Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestMiniredis(t *testing.T) {
	m, c := redistest.Miniredis(t)
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Get("k"); err != nil || got != "v" {
		t.Fatalf("miniredis GET k = %q, %v", got, err)
	}
}

// TestChildHelper is the child side of TestChild.
func TestChildHelper(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("runs only as a child of TestChild")
	}
	fmt.Println("noise")
	fmt.Printf("READY %d %s\n", os.Getpid(), os.Getenv("EXTRA"))
	time.Sleep(time.Minute)
}

func TestChild(t *testing.T) {
	if redistest.IsChild() {
		t.Skip("not in a child")
	}
	c := redistest.StartChild(t, "TestChildHelper", "EXTRA=x")
	line := c.WaitLine(t, "READY", 30*time.Second)
	if want := fmt.Sprintf("READY %d x", c.Pid()); line != want {
		t.Fatalf("WaitLine = %q, want %q", line, want)
	}
	c.Kill()
	c.Kill() // idempotent
	// A nil error would mean a clean exit; a timeout a live process.
	var exitErr *exec.ExitError
	if err := c.Wait(time.Second); !errors.As(err, &exitErr) {
		t.Fatalf("Wait after Kill = %v, want an *exec.ExitError", err)
	}
}
