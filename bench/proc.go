package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A proc is a peer server process the bench started (etcd, PostgreSQL):
// redis-servers are started by internal/redistest instead.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *tail
	done chan struct{} // closed once the process exited
	sig  os.Signal     // asks it to shut down
}

// procOpts is how to start a proc.
type procOpts struct {
	uid, gid uint32    // run as this user when uid is not 0
	sig      os.Signal // shutdown signal; SIGTERM when nil
}

// startProc starts path with args, keeping the tail of its output.
func startProc(path string, args []string, o procOpts) (*proc, error) {
	p := &proc{name: path, out: &tail{}, done: make(chan struct{}), sig: o.sig}
	if p.sig == nil {
		p.sig = syscall.SIGTERM
	}
	p.cmd = exec.Command(path, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = sysProcAttr(o.uid, o.gid)
	p.cmd.WaitDelay = time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// runProc runs path with args to completion, as startProc would start it.
func runProc(ctx context.Context, path string, args []string, o procOpts) error {
	cmd := exec.CommandContext(ctx, path, args...)
	out := &tail{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr(o.uid, o.gid)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, out.last())
	}
	return nil
}

// waitReady polls ready until it succeeds, the process exits, ctx ends or
// limit passes.
func (p *proc) waitReady(ctx context.Context, limit time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %s", p.name, p.out.last())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %v: %v", p.name, limit, err)
		}
	}
}

// stop asks the process to shut down and kills it if it has not within 5s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(p.sig)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpu returns the CPU time the process and its children have used so far.
func (p *proc) cpu() (time.Duration, error) { return treeCPU(p.cmd.Process.Pid) }

// tail is an io.Writer that keeps the last 8 KiB written to it. It is
// safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - 8<<10; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

// last returns the last non-empty line written.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return lines[len(lines)-1]
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errNotInstalled marks a peer whose binaries are missing.
var errNotInstalled = errors.New("not installed")
