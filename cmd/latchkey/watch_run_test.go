package main

import (
	"bufio"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A watchRun is a watch process whose output lines the test reads.
type watchRun struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	read  int           // the lines waitFor has gone past
	more  chan struct{} // a line arrived, or the output ended
	ended chan struct{}
}

// startWatch starts the binary with args, which run a watch.
func (c cli) startWatch(t *testing.T, args ...string) *watchRun {
	t.Helper()
	cmd := exec.Command(c.bin, append(append([]string(nil), c.conn...), args...)...)
	cmd.Env = append(cliEnv(), c.env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watchRun{cmd: cmd, more: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.more <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-w.ended
			_ = cmd.Wait()
		}
	})
	return w
}

// waitFor returns the next line that contains want, within 5s.
func (w *watchRun) waitFor(t *testing.T, want string) string {
	t.Helper()
	return w.waitForWithin(t, want, 5*time.Second)
}

func (w *watchRun) waitForWithin(t *testing.T, want string, d time.Duration) string {
	t.Helper()
	deadline := time.After(d)
	for {
		w.mu.Lock()
		for w.read < len(w.lines) {
			l := w.lines[w.read]
			w.read++
			if strings.Contains(l, want) {
				w.mu.Unlock()
				return l
			}
		}
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-w.ended:
			t.Fatalf("watch ended before a line with %q", want)
		case <-deadline:
			t.Fatalf("no line with %q within %v; got:\n%s", want, d, strings.Join(w.all(), "\n"))
		}
	}
}

func (w *watchRun) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.lines)
}

// stop stops the watch with SIGINT, checks that it exits cleanly, and
// returns every line it printed.
func (w *watchRun) stop(t *testing.T) []string {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end within 10s of SIGINT")
	}
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("watch after SIGINT: %v", err)
	}
	return w.all()
}
