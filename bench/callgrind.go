package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A callgrindServer is a throwaway redis-server run under valgrind's
// callgrind, which counts the instructions it executes. Its counters are
// zeroed and dumped around each measured window with callgrind_control,
// on the one long-running process, so that its start-up is never counted.
type callgrindServer struct {
	Addr  string
	proc  *proc
	dir   string
	out   string // callgrind's output file; a dump is out.<n>
	dumps int
}

// The time limits of the server under valgrind: it runs 20-50 times
// slower than natively, and more on a busy machine.
const (
	callgrindStart   = 2 * time.Minute
	callgrindControl = time.Minute
)

// cronFunction is the server's timer callback: it runs hz times a second
// whatever the load, so its instructions are taken out of every window
// (see dump).
const cronFunction = "serverCron"

// callgrindOptions are those of the workers' clients on the server under
// callgrind. Its replies take milliseconds, longer than go-redis's first
// pause before a resend (MinRetryBackoff, 8ms by default), and latchkey
// deletes a request record early only when its reply came sooner than
// that pause, since no resend can have followed (internal/scripts,
// records.go): with the pause at its longest (MaxRetryBackoff, 512ms), the
// records go as they do on a native server. Nothing else changes: no
// command fails, so none is resent, and a record's TTL does not depend on
// the pause's minimum.
func callgrindOptions(o *redis.Options) {
	o.MinRetryBackoff, o.MaxRetryBackoff = 512*time.Millisecond, 512*time.Millisecond
}

// callgrindMissing says why the instruction counts cannot be taken here, or
// "" when they can.
func callgrindMissing() string {
	for _, bin := range []string{"valgrind", "callgrind_control", redistest.Binary} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed (Debian packages valgrind, redis-server)"
		}
	}
	return ""
}

// startCallgrind starts redis-server under callgrind on a free loopback
// port, without persistence, and waits until it answers PING.
func startCallgrind(ctx context.Context) (*callgrindServer, error) {
	dir, err := os.MkdirTemp("", "latchkey-bench-callgrind-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &callgrindServer{Addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir, out: filepath.Join(dir, "callgrind.out")}
	s.proc, err = startProc("valgrind", []string{"--tool=callgrind", "--callgrind-out-file=" + s.out,
		redistest.Binary, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--protected-mode", "no"}, procOpts{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	err = s.proc.waitReady(ctx, callgrindStart, func(ctx context.Context) error {
		// Dialled first, so that go-redis does not log each refusal.
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr)
		if err != nil {
			return err
		}
		_ = conn.Close()
		return c.Ping(ctx).Err()
	})
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("redis-server under callgrind: %w", err)
	}
	return s, nil
}

func (s *callgrindServer) stop() {
	s.proc.stop()
	_ = os.RemoveAll(s.dir)
}

// zero sets the server's counters to zero.
func (s *callgrindServer) zero(ctx context.Context) error { return s.control(ctx, "-z") }

// dump returns what the server executed since the counters were last
// zeroed: every instruction, and those of cronFunction with its callees.
// The profile is copied to keep unless keep is "".
func (s *callgrindServer) dump(ctx context.Context, keep string) (total, cron int64, err error) {
	if err := s.control(ctx, "-d"); err != nil {
		return 0, 0, err
	}
	s.dumps++
	file := fmt.Sprintf("%s.%d", s.out, s.dumps)
	defer os.Remove(file)
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, fmt.Errorf("callgrind dump: %w", err)
	}
	if keep != "" {
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			return 0, 0, err
		}
	}
	return parseCallgrind(bytes.NewReader(b), cronFunction)
}

// control runs callgrind_control with flag on the server's process. It
// returns once the server has done it.
func (s *callgrindServer) control(ctx context.Context, flag string) error {
	ctx, cancel := context.WithTimeout(ctx, callgrindControl)
	defer cancel()
	out, err := exec.CommandContext(ctx, "callgrind_control", flag, strconv.Itoa(s.proc.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("callgrind_control %s: %w: %s", flag, err, strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s: %s", flag, strings.TrimSpace(string(out)))
	}
	return nil
}

// parseCallgrind reads a callgrind profile of the single event Ir and
// returns its total (the "totals:" line, the sum of every cost line) and
// the inclusive cost of the calls to the function fn: the cost lines that
// follow a "calls=" line whose callee (the latest cfn=) is fn. Function
// names are compressed: "(id) name" defines id, "(id)" refers to it.
func parseCallgrind(r io.Reader, fn string) (total, inclusive int64, err error) {
	names := map[string]string{}
	var (
		callee     string
		afterCalls bool
		found      bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "totals:"):
			f := strings.Fields(line)
			if len(f) < 2 {
				return 0, 0, fmt.Errorf("callgrind: bad line %q", line)
			}
			if total, err = strconv.ParseInt(f[1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("callgrind: bad line %q", line)
			}
			found = true
		case strings.HasPrefix(line, "fn="), strings.HasPrefix(line, "cfn="):
			key, name := line[strings.IndexByte(line, '=')+1:], ""
			if id, rest, ok := strings.Cut(key, ") "); ok && strings.HasPrefix(key, "(") {
				key, name = id+")", rest
				names[key] = name
			} else if strings.HasPrefix(key, "(") {
				name = names[key]
			} else {
				name = key
			}
			if line[0] == 'c' {
				callee = name
			}
		case strings.HasPrefix(line, "calls="):
			afterCalls = true
		case afterCalls && line != "" && strings.ContainsRune("0123456789+-*", rune(line[0])):
			afterCalls = false
			if callee != fn {
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err != nil || len(f) < 2 {
				return 0, 0, fmt.Errorf("callgrind: bad call cost %q", line)
			}
			inclusive += v
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, errors.New("callgrind: no totals in the dump")
	}
	return total, inclusive, nil
}
