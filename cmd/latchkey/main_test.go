package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// raceBuild is set when the tests run under -race: the binary is built
// with it too.
var raceBuild bool

// build compiles the command into a temporary directory of t.
func build(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("LATCHKEY_TEST_BIN"); bin != "" {
		return bin // a binary built elsewhere: an earlier commit's, to show what a test finds there
	}
	bin := filepath.Join(t.TempDir(), "latchkey")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cli runs the binary with args, stdin not a terminal, and returns its
// output and exit status.
type cli struct {
	bin  string
	conn []string // connection flags
	env  []string // more environment variables, NAME=value
}

func (c cli) run(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(append([]string(nil), c.conn...), args...)...)
	cmd.Env = append(cliEnv(), c.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// states runs the binary, expects exit 0 (or 3, nothing here), and
// decodes its JSON lines.
func (c cli) states(t *testing.T, args ...string) []State {
	t.Helper()
	out, errOut, code := c.run(t, args...)
	if code != 0 && code != exitNothing {
		t.Fatalf("latchkey %v: exit %d\n%s", args, code, errOut)
	}
	return decodeStates(t, out)
}

// inspect runs inspect -json on one name.
func (c cli) inspect(t *testing.T, name string, flags ...string) State {
	t.Helper()
	sts := c.states(t, append(append([]string{"inspect", "-json"}, flags...), name)...)
	if len(sts) != 1 {
		t.Fatalf("inspect %s: %d objects, want 1", name, len(sts))
	}
	return sts[0]
}

// cliEnv is the binary's environment: no REDIS_URL or REDISCLI_AUTH, and a
// race detector (when built with it) that does not sleep a second at exit.
func cliEnv() []string {
	return append(os.Environ(), "REDIS_URL=", authEnv+"=", "GORACE=atexit_sleep_ms=0 halt_on_error=1")
}

func testName(t *testing.T, prefix string) string { return locktest.Name(t, prefix) }

// eventually polls f until it holds or 5s pass.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
