package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// A server is the Redis the suite runs against.
type server struct {
	Addr string
	Mode string // "external", "embedded" or "miniredis"
	mini *miniredis.Miniredis
	stop func()
}

// miniNote is said wherever miniredis figures are shown.
const miniNote = "MINIREDIS: these figures come from an in-process miniredis (no redis-server was " +
	"found, or -miniredis was given); they are NOT comparable to a real Redis server."

// startServer connects to addr if given, else starts a throwaway
// redis-server from PATH on a free loopback port, else (or when forced) an
// in-process miniredis whose clock follows real time.
func startServer(ctx context.Context, addr string, forceMini bool, log io.Writer) (*server, error) {
	if addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			return nil, fmt.Errorf("redis at %s: %w", addr, err)
		}
		return &server{Addr: addr, Mode: "external", stop: func() {}}, nil
	}
	if !forceMini {
		path, err := exec.LookPath("redis-server")
		if err == nil {
			s, err := launch(ctx, path)
			if err == nil {
				return s, nil
			}
			fmt.Fprintf(log, "bench: could not start %s (%v); falling back to miniredis\n", path, err)
		} else {
			fmt.Fprintln(log, "bench: no redis-server on PATH; falling back to miniredis")
		}
	}
	return startMini()
}

// startNodes returns n independent masters for the scenarios that span
// several: the given addresses if any, else throwaway redis-servers, else
// (or when mini is set) miniredis instances.
func startNodes(ctx context.Context, addrs []string, n int, mini bool, log io.Writer) ([]*server, error) {
	var out []*server
	if len(addrs) > 0 {
		if len(addrs) < n {
			return nil, fmt.Errorf("-nodes: %d addresses given, %d needed", len(addrs), n)
		}
		for _, a := range addrs[:n] {
			s, err := startServer(ctx, a, false, log)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	for range n {
		s, err := startServer(ctx, "", mini, io.Discard)
		if err != nil {
			stopAll(out)
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stopAll(ss []*server) {
	for _, s := range ss {
		s.stop()
	}
}

// startMini starts a miniredis and advances its clock with the wall clock,
// since miniredis only expires keys when told that time has passed.
func startMini() (*server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("miniredis: %w", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	})
	return &server{Addr: m.Addr(), Mode: "miniredis", mini: m, stop: func() {
		close(done)
		wg.Wait()
		m.Close()
	}}, nil
}

// launch starts redis-server on a free port, retrying on another port if the
// chosen one was taken in between.
func launch(ctx context.Context, path string, extra ...string) (*server, error) {
	var err error
	for range 5 {
		var s *server
		if s, err = launchOnce(ctx, path, extra); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func launchOnce(ctx context.Context, path string, extra []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "latchkey-bench-redis-")
	if err != nil {
		return nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", ""}, extra...)
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = sysProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(dir)
	}
	// Ready once the server logs that it listens: a PONG alone could come
	// from another server that took the port first.
	ready := make(chan struct{})
	var tail strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			if !seen && tail.Len() < 4096 {
				tail.WriteString(sc.Text() + "\n")
			}
			if !seen && strings.Contains(sc.Text(), "Ready to accept connections") {
				seen = true
				close(ready)
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-ready:
		return &server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Mode: "embedded", stop: stop}, nil
	case <-exited:
		os.RemoveAll(dir)
		return nil, fmt.Errorf("redis-server exited: %s", lastLine(tail.String()))
	case <-time.After(10 * time.Second):
		stop()
		return nil, errors.New("redis-server did not become ready within 10s")
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
