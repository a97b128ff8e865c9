package redistest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clientDialTimeout is the DialTimeout of the clients made by the helpers,
// short so that a test talking to a stopped server fails fast.
const clientDialTimeout = 2 * time.Second

// readyBanner is logged by redis-server once it listens on its port. Waiting
// for it, and not only for PING, ensures that the PONG does not come from
// another server that took the port first.
const readyBanner = "Ready to accept connections"

// sentinelBanner is what a sentinel logs once it monitors its master (a
// Redis 7.0 sentinel does not log readyBanner).
const sentinelBanner = "+monitor master"

// Server is one throwaway redis-server listening on 127.0.0.1, without
// persistence. Its methods are safe for concurrent use.
type Server struct {
	port    int
	busPort int    // cluster bus port; 0 when cluster mode is off
	conf    string // a sentinel's configuration file; "" for a data server
	dir     string
	extra   []string

	mu   sync.Mutex
	proc *process    // running process; nil once stopped or killed
	log  *tailBuffer // output of the current or last process
}

// StartServer starts a redis-server on a free port of 127.0.0.1 with a data
// directory under t.TempDir, passing extraArgs (such as "--maxmemory",
// "10mb") after the default arguments. It waits until the server answers
// PING. The server is killed by t.Cleanup.
//
// StartServer skips or fails t as [Require] does when redis-server is not
// installed.
func StartServer(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	Require(t)
	s, err := startServer(t.TempDir(), extraArgs, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// StartServers starts n independent redis-server masters, as [StartServer]
// does, for tests of algorithms such as RedLock that span several masters.
func StartServers(t testing.TB, n int) []*Server {
	t.Helper()
	servers := make([]*Server, n)
	for i := range servers {
		servers[i] = StartServer(t)
	}
	return servers
}

// startServer starts a server in dir, choosing a new free port whenever the
// previous one turns out to be taken. In cluster mode it also chooses a free
// port for the cluster bus.
func startServer(dir string, extra []string, cluster bool) (*Server, error) {
	return start(dir, extra, cluster, "")
}

// start is startServer, and runs a sentinel when conf names its
// configuration file.
func start(dir string, extra []string, cluster bool, conf string) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < bindAttempts; attempt++ {
		s := &Server{dir: dir, extra: extra, conf: conf}
		var err error
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		if cluster {
			if s.busPort, err = freePort(); err != nil {
				return nil, err
			}
			if s.busPort == s.port {
				continue
			}
		}
		s.mu.Lock()
		err = s.launch()
		s.mu.Unlock()
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errAddrInUse) {
			return nil, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("redistest: no usable port after %d attempts: %w", bindAttempts, lastErr)
}

// args returns the command line of the server.
func (s *Server) args() []string {
	if s.conf != "" {
		return append([]string{s.conf, "--sentinel",
			"--port", strconv.Itoa(s.port), "--bind", Host, "--dir", s.dir}, s.extra...)
	}
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", Host,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--enable-debug-command", "local",
		"--dir", s.dir,
	}
	if s.busPort != 0 {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
			"--cluster-port", strconv.Itoa(s.busPort),
			"--cluster-announce-ip", Host,
		)
	}
	return append(args, s.extra...)
}

// launch starts the server process and waits until it is ready. The caller
// must hold s.mu, and s.proc must be nil.
func (s *Server) launch() error {
	log := &tailBuffer{}
	p, err := startProcess(Binary, s.args(), nil, log, log)
	if err != nil {
		return fmt.Errorf("redistest: start %s: %w", Binary, err)
	}
	s.log = log
	if err := s.waitReady(p, log); err != nil {
		_ = p.kill()
		return err
	}
	s.proc = p
	return nil
}

// waitReady waits until the process p has logged readyBanner and answers
// PING, for at most startTimeout.
func (s *Server) waitReady(p *process, log *tailBuffer) error {
	address := s.Addr()
	deadline := time.Now().Add(startTimeout)
	for {
		if p.exited() {
			out := log.String()
			if strings.Contains(out, "Address already in use") {
				return fmt.Errorf("redistest: redis-server on %s: %w", address, errAddrInUse)
			}
			return fmt.Errorf("redistest: redis-server on %s exited before answering PING (%v); output:\n%s", address, p.err, out)
		}
		err := errors.New("not ready yet")
		banner := readyBanner
		if s.conf != "" {
			banner = sentinelBanner
		}
		if strings.Contains(log.String(), banner) {
			err = ping(address, 250*time.Millisecond)
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s did not answer PING within %v (%v); output:\n%s", address, startTimeout, err, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Addr returns the host:port address of the server.
func (s *Server) Addr() string {
	return addr(s.port)
}

// Port returns the TCP port of the server.
func (s *Server) Port() int {
	return s.port
}

// Log returns the trailing output of the current or last server process,
// for use in failure messages.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// Client returns a client of the server with a short DialTimeout, after
// applying opts to its options. The client is closed by t.Cleanup.
func (s *Server) Client(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: s.Addr(), DialTimeout: clientDialTimeout}
	for _, opt := range opts {
		opt(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Stop stops the server cleanly with SIGTERM, which discards its data
// because persistence is off, and waits until its port is closed. A server
// that does not exit within 5 seconds is killed. Stop does nothing when the
// server is not running.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p == nil {
		return
	}
	s.proc = nil
	p.signal(sigCont) // a paused process would not handle SIGTERM
	p.signal(syscall.SIGTERM)
	if !p.wait(stopTimeout) {
		_ = p.kill()
	}
	_ = waitClosed(s.Addr(), time.Second)
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it to
// exit. Kill does nothing when the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		_ = s.proc.kill()
		s.proc = nil
	}
}

// Running reports whether the server has been started and not yet stopped
// or killed, and its process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// Restart starts the server again on the same port with the same arguments,
// stopping it first if it is running, and waits until it answers PING. The
// restarted server is empty: nothing is persisted across the restart. A
// cluster node keeps its nodes.conf, and so its identity and slots.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return // restarted concurrently
	}
	for _, name := range []string{"dump.rdb", "appendonly.aof", "appendonlydir"} {
		_ = os.RemoveAll(filepath.Join(s.dir, name))
	}
	// The port may be briefly held by a client connection that the
	// kernel gave it; unlike a first start, a restart must keep it.
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.launch()
		if err == nil {
			return
		}
		if !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			t.Fatalf("redistest: restart %s: %v", s.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pause freezes the server with SIGSTOP and resumes it with SIGCONT after d,
// to simulate a stalled server or a slow network. Pause returns at once. It
// does nothing when the server is not running or the platform has no
// SIGSTOP.
func (s *Server) Pause(d time.Duration) {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || !canPause {
		return
	}
	p.signal(sigStop)
	time.AfterFunc(d, func() { p.signal(sigCont) })
}
