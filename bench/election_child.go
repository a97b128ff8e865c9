package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// The environment of a child candidate: the impl it campaigns with, the
// address of its server (or of a proxy in front of it) and the election's
// name. A process started with candidateEnv set is a child candidate and
// nothing else (see candidateMain).
const (
	candidateEnv     = "LATCHKEY_BENCH_CANDIDATE"
	candidateAddrEnv = "LATCHKEY_BENCH_CANDIDATE_ADDR"
	candidateNameEnv = "LATCHKEY_BENCH_CANDIDATE_NAME"
)

// candidateMain runs the child candidate and exits, in a process started
// by startCandidate; in any other process it returns at once. main and
// the tests' TestMain call it first, so that the same binary serves as
// the leader that the election scenario kills, stops or cuts off.
func candidateMain() {
	impl := os.Getenv(candidateEnv)
	if impl == "" {
		return
	}
	if err := runCandidate(impl, os.Getenv(candidateAddrEnv), os.Getenv(candidateNameEnv)); err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runCandidate campaigns in the election name with impl's handle on the
// server at addr, says "lead <term>" on stdout once it leads, and keeps
// leading until its stdin closes; then the process exits without
// resigning. A parent that dies without killing it (Pdeathsig is Linux's)
// thus still ends it.
func runCandidate(impl, addr, name string) error {
	ims, err := selectImpls(impl)
	if err != nil {
		return err
	}
	im := ims[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Nothing is closed: the process ends as a crash would, its
	// connections closed by the kernel, nothing released.
	c := &Conn{}
	if im.Peer != nil {
		if c.Peer, _, err = im.Peer.Dial(ctx, addr, new(atomic.Int64)); err != nil {
			return err
		}
	} else {
		redis.SetLogger(quietLog{}) // the failures it sees once cut off are the scenario's doing
		c.Client = redis.NewClient(&redis.Options{Addr: addr})
	}
	e, err := handle[Elector](ctx, im, c, name)
	if err != nil {
		return err
	}
	term, err := e.Campaign(ctx, "child")
	if err != nil {
		return err
	}
	fmt.Printf("lead %d\n", term)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// quietLog is a go-redis logger that logs nothing.
type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}

// A candidate is a child process campaigning in an election: the leader
// whose failure the election scenario measures.
type candidate struct {
	cmd   *exec.Cmd
	stdin io.Closer
	lines chan string   // its stdout, line by line; closed at its end
	done  chan struct{} // closed once it exited
	err   *tail         // its stderr
}

// startCandidate starts a copy of this binary campaigning with im in the
// election name on the server at addr. On Linux the kernel kills it if
// the bench dies first.
func startCandidate(im *Impl, addr, name string) (*candidate, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &candidate{cmd: exec.Command(exe), lines: make(chan string, 4), done: make(chan struct{}), err: &tail{}}
	c.cmd.Env = append(os.Environ(), candidateEnv+"="+im.Name, candidateAddrEnv+"="+addr, candidateNameEnv+"="+name)
	c.cmd.Stderr = c.err
	c.cmd.SysProcAttr = sysProcAttr(0, 0)
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case c.lines <- sc.Text():
			default: // it says one line; more would be noise, and must not block its reaping
			}
		}
		close(c.lines)
		_ = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// lead waits up to limit for the candidate to lead, and returns its term.
func (c *candidate) lead(limit time.Duration) (int64, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case line, ok := <-c.lines:
		if v, found := strings.CutPrefix(line, "lead "); found {
			return strconv.ParseInt(v, 10, 64)
		}
		if !ok {
			<-c.done
			return 0, fmt.Errorf("child candidate exited (%v) without leading: %s", c.cmd.ProcessState, c.err.last())
		}
		return 0, fmt.Errorf("child candidate: %s", line)
	case <-t.C:
		return 0, fmt.Errorf("child candidate did not lead within %v", limit)
	}
}

// signal sends sig to the candidate.
func (c *candidate) signal(sig syscall.Signal) error {
	return c.cmd.Process.Signal(sig)
}

// kill kills the candidate, stopped or not, and waits for it.
func (c *candidate) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.stdin.Close()
	<-c.done
}
