package main

import (
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

// testExitCodes checks the statuses a script can tell apart: nothing
// here, not locked, not confirmed; and that empty lists print as [].
func testExitCodes(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	missing := testName(t, "missing")
	if out, _, code := c.run(t, "inspect", missing); code != exitNothing || !strings.Contains(out, "nothing here") {
		t.Errorf("inspect of nothing: exit %d, %q; want %d", code, out, exitNothing)
	}
	if _, _, code := c.run(t, "ls", missing+"*"); code != exitNothing {
		t.Errorf("ls matching nothing: exit %d, want %d", code, exitNothing)
	}
	if _, _, code := c.run(t, "unlock", "-yes", missing); code != exitNothing {
		t.Errorf("unlock of nothing: exit %d, want %d", code, exitNothing)
	}

	// A free lock, its fencing counter left from a hold.
	name := testName(t, "free")
	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if out, _, code := c.run(t, "unlock", "-yes", name); code != exitNotLocked || !strings.Contains(out, "not locked") {
		t.Errorf("unlock of a free lock: exit %d, %q; want %d", code, out, exitNotLocked)
	}

	// Without -yes on a stdin that is not a terminal nothing is done.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(ctx) }()
	if _, errOut, code := c.run(t, "unlock", name); code != exitNotConfirmed || !strings.Contains(errOut, "-yes") {
		t.Errorf("unlock without -yes: exit %d, %q; want %d", code, errOut, exitNotConfirmed)
	}
	if ok, _ := m.IsLocked(ctx); !ok {
		t.Error("unlock without -yes unlocked")
	}

	pes := testName(t, "pes")
	if _, err := permitsemaphore.New(rdb, pes).TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	out, _, _ := c.run(t, "inspect", "-json", pes)
	for _, want := range []string{`"permit_ids":[]`, `"queue":[]`, `"holders":[]`, `"grants":[]`} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect -json of an idle permit semaphore lacks %s: %s", want, out)
		}
	}
}

// testClusterGuard reaches one node of a cluster without -cluster: ls
// and inspect say to pass it, rather than answer for one node's slots.
func testClusterGuard(t *testing.T, bin string, cl *redistest.Cluster) {
	one := cli{bin: bin, conn: []string{"-redis", cl.Addrs()[0]}}
	for _, args := range [][]string{{"ls"}, {"inspect", "some-lock"}} {
		if _, errOut, code := one.run(t, args...); code != exitUsage || !strings.Contains(errOut, "-cluster") {
			t.Errorf("%v on a cluster node without -cluster: exit %d, %q; want %d and a hint", args, code, errOut, exitUsage)
		}
	}
}
