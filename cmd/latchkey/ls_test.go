package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// globMatch matches as the server's SCAN MATCH does.
func TestGlobMatch(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	prefix := testName(t, "glob") + ":"
	strs := []string{"", "a", "ab", "abc", "a*c", "a?c", "a[b]c", `a\c`, "xyz", "a-c", "a^c", "aXc", "]", "abcabc"}
	for _, s := range strs {
		rdb.Set(ctx, prefix+s, 1, time.Minute)
	}
	for _, p := range []string{"*", "a*", "*c", "a?c", "a[bX]c", "a[^b]c", "a[a-c]c", "a[c-a]c", `a\*c`, `a\?c`,
		`a\[b\]c`, `a\\c`, "a[-]c", "a[b", "*abc", "a*b*c", "**", "?", "[]]", "a[\\]]c", "abc*abc", "a\\"} {
		want := map[string]bool{}
		it := rdb.Scan(ctx, 0, globEscape.Replace(prefix)+p, 1000).Iterator()
		for it.Next(ctx) {
			want[strings.TrimPrefix(it.Val(), prefix)] = true
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		for _, s := range strs {
			if got := globMatch(p, s); got != want[s] {
				t.Errorf("globMatch(%q, %q) = %v; the server says %v", p, s, got, want[s])
			}
		}
	}
}

// TestLsKeyspace lists 20 locks among 200,000 keys of every type that are
// no synchronizer's (strings, integers, hashes, lists): each lock is
// listed, with its kind, nothing else is, and ls exits 0 on its default
// -timeout (10s), which bounds each round trip. Before, ls made a round
// trip per key, ran out of its -timeout, and printed nothing.
func TestLsKeyspace(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	ctx := t.Context()
	fillKeyspace(t, rdb, 200_000)
	want := map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("lk:mutex:%d", i)
		m := mutex.New(rdb, name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer m.Unlock(context.Background())
		want[name] = kindMutex
	}
	for i := range 4 {
		name := fmt.Sprintf("lk:fair:%d", i)
		f := fairlock.New(rdb, name)
		if err := f.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer f.Unlock(context.Background())
		want[name] = kindFairLock
	}
	for i := range 3 {
		name := fmt.Sprintf("lk:rw:%d", i)
		l := rwlock.New(rdb, name)
		if err := l.RLock(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.RUnlock(context.Background())
		want[name] = kindRWLock
	}
	for i := range 5 { // Java clients' RLocks, nothing beside them
		name := fmt.Sprintf("java:lock:%d", i)
		rdb.HSet(ctx, name, fmt.Sprintf("%s:%d", java, i+1), 1)
		rdb.PExpire(ctx, name, time.Minute)
		want[name] = kindEitherLock
	}
	if n := rdb.DBSize(ctx).Val(); n < 200020 {
		t.Fatalf("%d keys, want at least 200,020", n)
	}
	out, errOut, code := c.run(t, "ls", "-json")
	if code != 0 {
		t.Fatalf("ls: exit %d, want 0: %s", code, errOut)
	}
	got := map[string]string{}
	for _, st := range decodeStates(t, out) {
		got[st.Name] = st.Kind
	}
	for name, kind := range want {
		if got[name] != kind {
			t.Errorf("%s: listed as %q, want %q", name, got[name], kind)
		}
	}
	if len(got) != len(want) {
		t.Errorf("ls listed %d names, want the %d locks: %v", len(got), len(want), got)
	}
	table, _, code := c.run(t, "ls", "lk:*")
	if code != 0 || strings.Count(table, "\n") != 16 || !strings.Contains(table, "lk:mutex:7") {
		t.Errorf("ls lk:*: exit %d, want 0, a header and 15 rows:\n%s", code, table)
	}
}

// TestLsFrozenNode lists a cluster one of whose masters is frozen: the
// other masters' locks are listed, stderr says which master's are
// missing, and the exit status says the listing is partial (7), once the
// frozen master's first round trip ran out of -timeout.
func TestLsFrozenNode(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	c := cli{bin: build(t), conn: []string{"-cluster", "-redis", strings.Join(cl.Addrs(), ","), "-timeout", "1s"}}
	ctx := t.Context()
	byNode := map[int][]string{} // by port
	for i := 0; len(byNode) < 3; i++ {
		name := fmt.Sprintf("frozen:%d", i)
		node, err := cc.MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cc.HSet(ctx, name, java+":1", 1)
		cc.PExpire(ctx, name, time.Minute)
		byNode[port(t, node.Options().Addr)] = append(byNode[port(t, node.Options().Addr)], name)
	}
	frozen := freezeOne(t, cl)
	out, errOut, code := c.run(t, "ls", "-json", "frozen:*")
	if code != exitPartial || !strings.Contains(errOut, "partial listing") || !strings.Contains(errOut, fmt.Sprintf(":%d:", frozen.Port())) {
		t.Errorf("ls with a frozen master: exit %d, stderr %q; want %d, naming %s", code, errOut, exitPartial, frozen.Addr())
	}
	if testing.Verbose() {
		t.Logf("stderr: %s", errOut)
	}
	var listed []string
	for _, st := range decodeStates(t, out) {
		listed = append(listed, st.Name)
	}
	for p, names := range byNode {
		for _, name := range names {
			if in := slices.Contains(listed, name); in == (p == frozen.Port()) {
				t.Errorf("%s on port %d: listed %v (frozen master %s)", name, p, in, frozen.Addr())
			}
		}
	}
}

// fillKeyspace writes n keys that are no synchronizer's: half strings, a
// quarter integers (counters), 15% hashes of two fields, 10% lists.
func fillKeyspace(t testing.TB, rdb redis.UniversalClient, n int) {
	t.Helper()
	if err := rdb.Eval(t.Context(), `
local n = tonumber(ARGV[1])
for i = 1, n * 50 / 100 do redis.call('set', 'cache:' .. i, 'value ' .. i) end
for i = 1, n * 25 / 100 do redis.call('set', 'hits:' .. i, i) end
for i = 1, n * 15 / 100 do redis.call('hset', 'user:' .. i, 'name', 'n' .. i, 'email', i .. '@x') end
for i = 1, n * 10 / 100 do redis.call('rpush', 'jobs:' .. i, 'a', 'b') end
return 1`, nil, n).Err(); err != nil {
		t.Fatal(err)
	}
}

// decodeStates decodes ls -json's lines.
func decodeStates(t *testing.T, out string) []State {
	t.Helper()
	var sts []State
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var st State
		if err := dec.Decode(&st); err != nil {
			t.Fatalf("bad JSON %v in\n%s", err, out)
		}
		sts = append(sts, st)
	}
	return sts
}

// TestTimeoutFrozenNode reads a name whose master is frozen, with
// -timeout 2s: inspect gives up within the -timeout and a margin (the
// cluster's map, asked of each seed in turn, and the dial), exiting 1
// (Redis could not be reached); a name on another master reads as ever.
// Before, go-redis's own read timeout (3s) and retries came on top.
func TestTimeoutFrozenNode(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	c := cli{bin: build(t), conn: []string{"-cluster", "-redis", strings.Join(cl.Addrs(), ","), "-timeout", "2s"}}
	ctx := t.Context()
	frozen := cl.Nodes()[0]
	var on, off string // a name on the frozen master, one elsewhere
	for i := 0; on == "" || off == ""; i++ {
		name := fmt.Sprintf("stall:%d", i)
		node, err := cc.MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if node.Options().Addr == frozen.Addr() {
			on = name
		} else {
			off = name
		}
	}
	freezeOne(t, cl)
	start := time.Now()
	_, errOut, code := c.run(t, "inspect", on)
	took := time.Since(start)
	if code != exitError || !strings.Contains(errOut, on) {
		t.Errorf("inspect of a name on a frozen master: exit %d, %q; want %d", code, errOut, exitError)
	}
	if took > 2*time.Second+3*time.Second {
		t.Errorf("inspect -timeout 2s of a name on a frozen master took %v", took)
	}
	t.Logf("inspect -timeout 2s, frozen master: %v", took)
	if _, errOut, code := c.run(t, "inspect", off); code != exitNothing {
		t.Errorf("inspect of a name on a live master: exit %d, %s; want %d (nothing here)", code, errOut, exitNothing)
	}
}

// freezeOne freezes the cluster's first node (SIGSTOP) until t ends; the
// others keep serving their slots once they find it failed (as a cluster
// set with cluster-require-full-coverage no does), so that a test sees
// the frozen node alone.
func freezeOne(t *testing.T, cl *redistest.Cluster) *redistest.Server {
	t.Helper()
	for _, n := range cl.Nodes()[1:] {
		if err := n.Client(t).ConfigSet(t.Context(), "cluster-require-full-coverage", "no").Err(); err != nil {
			t.Fatal(err)
		}
	}
	frozen := cl.Nodes()[0]
	frozen.Freeze()
	t.Cleanup(frozen.Thaw)
	return frozen
}

// port returns the port of addr, host:port.
func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
