package main

import (
	"context"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/countdownlatch"
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

// testRefusals: a command that what Redis holds does not allow exits 6
// (refused, nothing changed), which a script tells from 1 (Redis could not
// be reached): unlock of a latch, clear of a held lock, and a -kind of
// another family than the key's, which says what the key holds instead of
// Redis' WRONGTYPE.
func testRefusals(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	latch := testName(t, "latch")
	if _, err := countdownlatch.New(rdb, latch).TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wrong := []struct {
		args []string
		want string
	}{
		{[]string{"unlock", "-yes", "-kind", "countdownlatch", latch}, "only locks"},
		{[]string{"unlock", "-yes", "-kind", "mutex", latch}, `holds a string, which reads as a semaphore|countdownlatch`},
		{[]string{"inspect", "-kind", "rwlock", latch}, "holds a string"},
		{[]string{"countdown", "-yes", "-kind", "semaphore", latch}, "only a countdownlatch counts down"},
	}
	for _, w := range wrong {
		if _, errOut, code := c.run(t, w.args...); code != exitRefused || !strings.Contains(errOut, w.want) || strings.Contains(errOut, "WRONGTYPE") {
			t.Errorf("%v: exit %d, %q; want %d, saying %q", w.args, code, errOut, exitRefused, w.want)
		}
	}
	if n, _ := countdownlatch.New(rdb, latch).Count(ctx); n != 2 {
		t.Errorf("latch count %d after refusals, want 2", n)
	}
	m := mutex.New(rdb, testName(t, "held"))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(context.Background())
	if _, errOut, code := c.run(t, "inspect", "-kind", "semaphore", m.Name()); code != exitRefused || !strings.Contains(errOut, "holds a hash, which reads as a mutex") {
		t.Errorf("inspect -kind semaphore of a mutex: exit %d, %q; want %d", code, errOut, exitRefused)
	}
}
