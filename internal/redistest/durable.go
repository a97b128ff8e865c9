package redistest

import (
	"errors"
	"testing"
	"time"
)

// durableArgs make a server persist every write before acknowledging it.
var durableArgs = []string{"--appendonly", "yes", "--appendfsync", "always"}

// StartDurableServer starts a server as [StartServer] does, but with an
// append-only file synced on every write (--appendonly yes --appendfsync
// always), so that [Server.CrashRestart] brings back every write the
// server acknowledged.
func StartDurableServer(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	return StartServer(t, append(append([]string(nil), durableArgs...), extraArgs...)...)
}

// CrashRestart kills the server with SIGKILL, as a crash would, and starts
// it again on the same port with the same arguments and data directory,
// keeping whatever it had persisted: for a server from
// [StartDurableServer], every acknowledged write; for one without
// persistence, nothing. It waits until the server has loaded its data and
// answers PING.
func (s *Server) CrashRestart(t testing.TB) {
	t.Helper()
	s.Kill()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return // restarted concurrently
	}
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.launch()
		if err == nil {
			return
		}
		if !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			t.Fatalf("redistest: crash-restart %s: %v", s.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
