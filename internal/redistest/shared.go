package redistest

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"go.uber.org/goleak"
)

// sharedDirPattern names the temporary directories of shared servers.
const sharedDirPattern = "latchkey-redistest-"

// shared holds the servers shared by the tests of one test binary.
var shared struct {
	serverMu  sync.Mutex
	server    *Server
	serverErr error

	clusterMu  sync.Mutex
	cluster    *Cluster
	clusterErr error

	dirsMu sync.Mutex
	dirs   []string
}

// SharedServer returns a redis-server shared by all tests of the test
// binary, started by the first call. Tests using it must use keys of their
// own and must not stop it; a shared server found dead is restarted empty.
// The server is stopped by [Main]; a test binary whose TestMain does not
// call Main leaves its shared servers running until it exits.
//
// SharedServer skips or fails t as [Require] does when redis-server is not
// installed.
func SharedServer(t testing.TB) *Server {
	t.Helper()
	Require(t)
	shared.serverMu.Lock()
	defer shared.serverMu.Unlock()
	if shared.server == nil && shared.serverErr == nil {
		var dir string
		dir, shared.serverErr = sharedDir()
		if shared.serverErr == nil {
			shared.server, shared.serverErr = startServer(dir, nil, false)
		}
	}
	if shared.serverErr != nil {
		t.Fatalf("redistest: shared server: %v", shared.serverErr)
	}
	if !shared.server.Running() {
		shared.server.Restart(t)
	}
	return shared.server
}

// SharedCluster returns a Redis Cluster of 3 masters shared by all tests of
// the test binary, started by the first call. Tests using it must use keys
// of their own and must not stop its nodes. The cluster is stopped by
// [Main], as for [SharedServer].
//
// SharedCluster skips or fails t as [Require] does when redis-server is not
// installed.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	Require(t)
	shared.clusterMu.Lock()
	defer shared.clusterMu.Unlock()
	if shared.cluster == nil && shared.clusterErr == nil {
		var dir string
		dir, shared.clusterErr = sharedDir()
		if shared.clusterErr == nil {
			shared.cluster, shared.clusterErr = startCluster(dir, 3)
		}
	}
	if shared.clusterErr != nil {
		t.Fatalf("redistest: shared cluster: %v", shared.clusterErr)
	}
	return shared.cluster
}

// sharedDir creates a temporary directory that [Main] removes.
func sharedDir() (string, error) {
	dir, err := os.MkdirTemp("", sharedDirPattern)
	if err != nil {
		return "", err
	}
	shared.dirsMu.Lock()
	shared.dirs = append(shared.dirs, dir)
	shared.dirsMu.Unlock()
	return dir, nil
}

// Main runs the tests of m, waits for the clean-ups of calls that gave up,
// stops the shared servers, checks that no
// goroutine outlived the tests (goleak), tells how many tests were skipped
// for want of redis-server, and exits with the result. Every
// package of the module calls it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	flight.Settle() // the clean-ups of calls that gave up
	stopShared()
	noteSkips()
	if code == 0 {
		// Work left running in the background ends within its own bound
		// (a clean-up after a caller gave up within 5s, a replica count
		// within 2s), which a loaded machine may use up: goleak.Find
		// alone waits about half a second.
		err := goleak.Find()
		for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
			err = goleak.Find()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "redistest: goroutines outlived the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// stopShared kills the shared servers and removes their directories.
func stopShared() {
	shared.serverMu.Lock()
	if shared.server != nil {
		shared.server.Kill()
	}
	shared.serverMu.Unlock()

	shared.clusterMu.Lock()
	if shared.cluster != nil {
		shared.cluster.kill()
	}
	shared.clusterMu.Unlock()

	shared.dirsMu.Lock()
	for _, dir := range shared.dirs {
		_ = os.RemoveAll(dir)
	}
	shared.dirs = nil
	shared.dirsMu.Unlock()
}
