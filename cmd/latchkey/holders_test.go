package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// testHolderLiveness stages holders whose TTL and process record tell
// apart: a latchkey holder renewed by its watchdog, a Java client's hold
// whose TTL has run down 18s of its 30s lease, a latchkey owner whose
// process stopped writing its record 3 minutes ago, one with no record,
// and a hold with a TTL over the lease. inspect says each one's liveness,
// in its table and in -json, and -lease changes the lease it assumes.
func testHolderLiveness(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "liveness")
	hold := func(name, owner string, ttl time.Duration) {
		rdb.HSet(ctx, name, owner, 1)
		rdb.PExpire(ctx, name, ttl)
		t.Cleanup(func() { rdb.Del(context.Background(), name) })
	}
	renewed := mutex.New(rdb, prefix+":renewed")
	if err := renewed.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer renewed.Unlock(context.Background())
	hold(prefix+":java", java+":1", 12*time.Second)
	silent, unrecorded := latchkeyShaped(), latchkeyShaped()
	hold(prefix+":silent", silent, 29*time.Second)
	hold(prefix+":unrecorded", unrecorded, 29*time.Second)
	hold(prefix+":fixed", java+":2", 2*time.Minute)
	record := keys.ProcessRecord(silent[:36]) // written 3 minutes ago
	rdb.Set(ctx, record, `{"host":"web-7","pid":4121,"program":"orders"}`, keys.ProcessTTL-3*time.Minute)
	defer rdb.Del(context.Background(), record)

	type want struct {
		running bool
		renewed [2]int64 // bounds, ms; -1: null
		table   string
	}
	for name, w := range map[string]want{
		"renewed":    {false, [2]int64{0, 5000}, "renewed "},
		"java":       {true, [2]int64{17000, 19500}, "(on a 30s lease), expires in 1"},
		"silent":     {false, [2]int64{500, 5000}, "process silent: record written 3m"},
		"unrecorded": {false, [2]int64{500, 5000}, "no process record"},
		"fixed":      {false, [2]int64{-1, -1}, "TTL over the 30s lease"},
	} {
		st := c.inspect(t, prefix+":"+name)
		if len(st.Holders) != 1 {
			t.Fatalf("%s: holders %+v", name, st.Holders)
		}
		h := st.Holders[0]
		switch {
		case h.RunningDown != w.running,
			w.renewed[0] < 0 && h.RenewedMs != nil,
			w.renewed[0] >= 0 && (h.RenewedMs == nil || *h.RenewedMs < w.renewed[0] || *h.RenewedMs > w.renewed[1]):
			t.Errorf("%s: running_down %v, renewed_ms %v; want %v, within %v", name, h.RunningDown, ptr(h.RenewedMs), w.running, w.renewed)
		}
		if table, _, _ := c.run(t, "inspect", prefix+":"+name); !strings.Contains(table, w.table) {
			t.Errorf("%s: inspect's table lacks %q:\n%s", name, w.table, table)
		}
	}
	st := c.inspect(t, prefix+":silent")
	if p := st.Holders[0].Process; p == nil || p.PID != 4121 || p.AgeMs < 179000 || p.Fresh() {
		t.Errorf("a process silent 3m: %+v, want pid 4121, age about 3m", p)
	}
	// The Java hold on a lease of 15s was renewed 3s ago.
	st = c.inspect(t, prefix+":java", "-lease", "15s")
	if h := st.Holders[0]; h.RunningDown || h.RenewedMs == nil || *h.RenewedMs > 4500 {
		t.Errorf("-lease 15s: %+v, want renewed about 3s ago", h)
	}
	ls, _, _ := c.run(t, "ls", prefix+":*")
	for _, want := range []string{"not renewed for 1", "process silent 3m", "no process record", "web-7 pid 4121"} {
		if !strings.Contains(ls, want) {
			t.Errorf("ls lacks %q:\n%s", want, ls)
		}
	}
}

// TestFrozenHolder freezes a process (SIGSTOP) that holds a mutex on a
// 9s watchdog lease: inspect shows the hold not renewed, before it
// expires, with the holder's host and pid. Before, the hold looked as
// healthy as any.
func TestFrozenHolder(t *testing.T) {
	srv := redistest.SharedServer(t)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	name := testName(t, "frozen")
	child := redistest.StartChild(t, "TestFrozenHolderChild", "HOLDER_ADDR="+srv.Addr(), "HOLDER_NAME="+name)
	child.WaitLine(t, "locked", 10*time.Second)
	eventually(t, "the holder's process record", func() bool { // written in the background
		st := c.inspect(t, name)
		return len(st.Holders) == 1 && st.Holders[0].Process != nil
	})
	if err := syscall.Kill(child.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(child.Pid(), syscall.SIGCONT)
	// Within the lease: the hold runs down at most 4.5s after the freeze,
	// and expires at most 9s after it.
	var st State
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st = c.inspect(t, name, "-lease", "9s"); len(st.Holders) != 1 || st.Holders[0].RunningDown {
			break
		}
	}
	if len(st.Holders) != 1 || !st.Holders[0].RunningDown {
		t.Fatalf("the frozen hold expired, or was never said to run down: %+v", st)
	}
	if p := st.Holders[0].Process; p == nil || p.PID != child.Pid() {
		t.Errorf("the frozen holder's process %+v, want pid %d", p, child.Pid())
	}
}

// TestFrozenHolderChild holds HOLDER_NAME on a 9s watchdog lease until
// it is killed.
func TestFrozenHolderChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("the child of TestFrozenHolder")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("HOLDER_ADDR")})
	m := mutex.New(rdb, os.Getenv("HOLDER_NAME"), mutex.WithWatchdogTimeout(9*time.Second))
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
}
