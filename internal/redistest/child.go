package redistest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// ChildEnv is the environment variable that [StartChild] sets to 1 in the
// child process.
const ChildEnv = "LATCHKEY_CHILD"

// IsChild reports whether the test binary was started by [StartChild], that
// is, whether the environment variable LATCHKEY_CHILD is non-empty.
func IsChild() bool {
	return os.Getenv(ChildEnv) != ""
}

// Child is a copy of the test binary running a single test, started by
// [StartChild] so that a test can kill a process that holds a lock.
type Child struct {
	proc   *process
	stdout *lineBuffer
	stderr *tailBuffer
}

// StartChild runs the test binary again as
//
//	os.Args[0] -test.run=^testName$ -test.v=false
//
// with LATCHKEY_CHILD=1 and env (in the "KEY=value" form) added to its
// environment. testName names a top-level test function, which runs its
// child part when [IsChild] is true and skips itself otherwise. The child's
// standard output is read with [Child.WaitLine]. The child is killed by
// t.Cleanup if it is still running.
func StartChild(t testing.TB, testName string, env ...string) *Child {
	t.Helper()
	c := &Child{stdout: newLineBuffer(), stderr: &tailBuffer{}}
	args := []string{"-test.run=^" + testName + "$", "-test.v=false"}
	environ := append(os.Environ(), ChildEnv+"=1")
	environ = append(environ, env...)
	p, err := startProcess(os.Args[0], args, environ, c.stdout, c.stderr)
	if err != nil {
		t.Fatalf("redistest: start child %s: %v", testName, err)
	}
	c.proc = p
	t.Cleanup(c.Kill)
	return c
}

// Pid returns the process ID of the child.
func (c *Child) Pid() int {
	return c.proc.cmd.Process.Pid
}

// WaitLine waits for a line of the child's standard output that starts with
// prefix and returns it without its line ending. Each line is returned at
// most once: successive calls return successive matching lines, and lines
// skipped over by a call are not searched again. WaitLine fails t when no
// such line comes within timeout or the child exits first.
func (c *Child) WaitLine(t testing.TB, prefix string, timeout time.Duration) string {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		line, ok, changed := c.stdout.next(prefix, false)
		if ok {
			return line
		}
		select {
		case <-changed:
		case <-c.proc.done:
			// Wait has returned, so all the output has been copied.
			if line, ok, _ := c.stdout.next(prefix, true); ok {
				return line
			}
			t.Fatalf("redistest: child %d exited (%v) before printing a line starting with %q\n%s",
				c.Pid(), c.proc.err, prefix, c.output())
		case <-timer.C:
			t.Fatalf("redistest: child %d printed no line starting with %q within %v\n%s",
				c.Pid(), prefix, timeout, c.output())
		}
	}
}

// output describes everything the child printed, for failure messages.
func (c *Child) output() string {
	return fmt.Sprintf("stdout:\n%s\nstderr:\n%s", c.stdout.String(), c.stderr.String())
}

// Wait waits up to timeout for the child to exit and returns its exit
// error, which is nil when it exited with status 0. It returns an error
// when the child is still running after timeout.
func (c *Child) Wait(timeout time.Duration) error {
	if !c.proc.wait(timeout) {
		return fmt.Errorf("redistest: child %d still running after %v", c.Pid(), timeout)
	}
	return c.proc.err
}

// Kill kills the child with SIGKILL and waits for it to exit. Kill does
// nothing when the child has already exited.
func (c *Child) Kill() {
	_ = c.proc.kill()
}

// lineBuffer is an io.Writer that splits what is written to it into lines.
// It is safe for concurrent use.
type lineBuffer struct {
	mu      sync.Mutex
	lines   []string
	partial []byte        // the unterminated end of the output
	cursor  int           // index of the first line not yet searched
	changed chan struct{} // closed and replaced on every write
}

func newLineBuffer() *lineBuffer {
	return &lineBuffer{changed: make(chan struct{})}
}

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.lines = append(b.lines, strings.TrimSuffix(string(b.partial[:i]), "\r"))
		b.partial = b.partial[i+1:]
	}
	close(b.changed)
	b.changed = make(chan struct{})
	return len(p), nil
}

// next returns the first line after the cursor that starts with prefix and
// moves the cursor past it. At the end of the output, when final is true, an
// unterminated last line counts as a line. When no line matches, next moves
// the cursor past every complete line and returns a channel that is closed
// by the next write.
func (b *lineBuffer) next(prefix string, final bool) (line string, ok bool, changed <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if final && len(b.partial) > 0 {
		b.lines = append(b.lines, string(b.partial))
		b.partial = nil
	}
	for b.cursor < len(b.lines) {
		line := b.lines[b.cursor]
		b.cursor++
		if strings.HasPrefix(line, prefix) {
			return line, true, nil
		}
	}
	return "", false, b.changed
}

// String returns all the output written so far.
func (b *lineBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n") + "\n" + string(b.partial)
}
