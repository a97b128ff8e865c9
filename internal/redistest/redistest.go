// Package redistest provides test helpers that run throwaway redis-server
// processes, Redis Cluster deployments, in-process miniredis instances and
// re-executed child test processes.
//
// Every server listens on a free port of 127.0.0.1 and is stopped by the
// cleanup of the test that started it, or by [Main] for the shared servers
// returned by [SharedServer] and [SharedCluster]. On Linux the processes are
// also started with a parent-death signal, so that a test binary that crashes
// does not leave servers behind.
//
// When redis-server is not on PATH, the helpers skip the calling test, or
// fail it when the environment variable CI is non-empty, so that a continuous
// integration machine that lacks Redis cannot pass silently.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary is the name of the Redis server executable looked up on PATH.
const Binary = "redis-server"

// Host is the loopback address every server binds to.
const Host = "127.0.0.1"

const (
	// startTimeout bounds the wait for a new server to answer PING.
	startTimeout = 5 * time.Second
	// stopTimeout bounds the wait for a server or child to exit.
	stopTimeout = 5 * time.Second
	// bindAttempts is how many fresh ports a start tries when the chosen
	// port was taken by someone else between probing and binding.
	bindAttempts = 5
	// logLimit is how many trailing bytes of a process's output are kept.
	logLimit = 64 << 10
)

// Available reports whether redis-server is on PATH.
func Available() bool {
	_, err := exec.LookPath(Binary)
	return err == nil
}

// Require skips t when redis-server is not on PATH. When the environment
// variable CI is non-empty it fails t instead, so that a misconfigured
// continuous integration machine does not skip every Redis test unnoticed.
func Require(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath(Binary)
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("redis-server not installed (CI is set, so this is an error): %v", err)
	}
	skipped.Add(1) // see noteSkips
	t.Skipf("redis-server not installed: %v", err)
}

// freePort returns a TCP port on Host that was free a moment ago. The port
// may be taken again before it is used, so callers retry on bind errors.
func freePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(Host, "0"))
	if err != nil {
		return 0, fmt.Errorf("redistest: probe free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("redistest: probe free port: %w", err)
	}
	return port, nil
}

// addr formats a port on Host as host:port.
func addr(port int) string {
	return net.JoinHostPort(Host, strconv.Itoa(port))
}

// tailBuffer is an io.Writer that keeps the last logLimit bytes written to it.
// It is safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - logLimit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// process is one started child process together with the result of
// waiting for it.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // result of cmd.Wait; read only after done is closed
}

// startProcess starts name with args, writing its standard output and
// standard error to the given writers, and reaps it in the background.
// A nil env inherits the environment of the test binary.
func startProcess(name string, args, env []string, stdout, stderr io.Writer) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = sysProcAttr()
	// A grandchild that inherits the output pipes must not block Wait.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process unless it has already exited.
func (p *process) signal(sig os.Signal) {
	if !p.exited() {
		// The process may exit between the check and the signal; the
		// resulting error is harmless, and os.Process never signals a
		// process that Wait has already reaped.
		_ = p.cmd.Process.Signal(sig)
	}
}

// wait waits up to timeout for the process to exit and reports whether it did.
func (p *process) wait(timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() error {
	p.signal(os.Kill)
	if !p.wait(stopTimeout) {
		return fmt.Errorf("redistest: pid %d did not exit within %v of SIGKILL", p.cmd.Process.Pid, stopTimeout)
	}
	return nil
}

// ping sends an inline PING to the server at address and reports whether it
// answered +PONG. Every step is bounded by timeout.
func ping(address string, timeout time.Duration) error {
	conn, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// waitClosed waits until nothing accepts connections at address.
func waitClosed(address string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", address, 100*time.Millisecond)
		if err != nil {
			return nil
		}
		conn.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s still accepts connections after %v", address, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// errAddrInUse is returned when a server could not bind its port.
var errAddrInUse = errors.New("address already in use")
