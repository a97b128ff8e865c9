package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
)

// TestCLI_connect runs the built binary for what is not about a
// synchronizer: its version, and the ways it finds its server.
func TestCLI_connect(t *testing.T) {
	bin := build(t)
	t.Run("version", func(t *testing.T) { testVersion(t, bin) })
	t.Run("password", func(t *testing.T) { testPassword(t, bin) })
	t.Run("sentinel", func(t *testing.T) { testSentinel(t, bin) })
}

// testVersion checks that version prints the module version that the
// build recorded (go version -m says which), or (devel).
func testVersion(t *testing.T, bin string) {
	out, errOut, code := cli{bin: bin}.run(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d: %s", code, errOut)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "(devel)"
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/latchkey/latchkey" {
			want = f[2]
		}
	}
	if !strings.HasPrefix(out, "latchkey "+want+", go1.") || !strings.Contains(out, "go-redis v9.") {
		t.Errorf("version printed %q, want latchkey %s with the Go and go-redis versions", out, want)
	}
	if _, _, code := (cli{bin: bin}).run(t, "version", "extra"); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

// testPassword checks that the password comes from -password, else from
// $REDISCLI_AUTH, as redis-cli reads it.
func testPassword(t *testing.T, bin string) {
	srv := redistest.StartServer(t)
	if err := srv.Client(t).ConfigSet(t.Context(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	conn := []string{"-redis", srv.Addr()}
	for _, c := range []struct {
		what string
		cli  cli
		code int
	}{
		{"no password", cli{bin: bin, conn: conn}, 1},
		{"REDISCLI_AUTH", cli{bin: bin, conn: conn, env: []string{authEnv + "=s3cret"}}, exitNothing}, // in, and nothing there
		{"a wrong REDISCLI_AUTH", cli{bin: bin, conn: conn, env: []string{authEnv + "=wrong"}}, 1},
		{"-password over REDISCLI_AUTH", cli{bin: bin, conn: append(conn, "-password", "s3cret"), env: []string{authEnv + "=wrong"}}, exitNothing},
	} {
		if _, errOut, code := c.cli.run(t, "inspect", "some-lock"); code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.what, code, c.code, errOut)
		}
	}
}

// testSentinel checks that -sentinel-master finds the master through a
// sentinel: inspect there sees a lock taken on the master.
func testSentinel(t *testing.T, bin string) {
	master := redistest.StartServer(t)
	sentinel := redistest.StartSentinel(t, master, "locks")
	rdb := master.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(rdb) })
	name := testName(t, "sentinel")
	m := mutex.New(rdb, name)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := cli{bin: bin, conn: []string{"-sentinel-master", "locks", "-redis", sentinel.Addr()}}
	if st := c.inspect(t, name); st.Kind != kindMutex || len(st.Holders) != 1 {
		t.Errorf("inspect through the sentinel: %+v, want the mutex held", st)
	}
	if _, errOut, code := (cli{bin: bin, conn: []string{"-sentinel-master", "nosuch", "-redis", sentinel.Addr()}}).run(t, "inspect", name); code != 1 {
		t.Errorf("an unknown master: exit %d, want 1 (%s)", code, errOut)
	}
	if _, _, code := (cli{bin: bin, conn: []string{"-sentinel-master", "locks", "-cluster", "-redis", sentinel.Addr()}}).run(t, "inspect", name); code != 2 {
		t.Errorf("-sentinel-master with -cluster: exit %d, want 2", code)
	}
	_ = m.Unlock(t.Context())
}
