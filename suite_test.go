package latchkey_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The conformance suite: every primitive registers its cases once (in its
// own suite_<primitive>_test.go), and TestConformance runs each of them on
// every backend: miniredis, a real redis-server, and a 3-master Redis
// Cluster, the last two started by the tests themselves.

// env is one case's view of a backend.
type env struct {
	// Name is a lock name unique to this case.
	Name string
	// Client returns a new client, as a separate process would have; it is
	// closed (and its latchkey resources released) when the case ends.
	Client func() redis.UniversalClient
	// Advance lets d of server time pass: miniredis's clock is advanced,
	// a real server is waited for.
	Advance func(d time.Duration)
	// Real reports a real server, where TTLs run by wall clock.
	Real bool
	// Polling reports clients that poll (latchkey.SetPolling) and may not
	// subscribe: their waiters register with no Hub.
	Polling bool
	// Observer, if set, returns a client for the case's own eyes (its
	// subscriptions), where Client's may not subscribe.
	Observer func() redis.UniversalClient
}

// observer returns a client for the case's own subscriptions.
func (e *env) observer() redis.UniversalClient {
	if e.Observer != nil {
		return e.Observer()
	}
	return e.Client()
}

type conformanceCase struct {
	name string
	run  func(t *testing.T, e *env)
}

var cases []conformanceCase

// register adds a case to the suite; call it from an init function.
func register(name string, run func(t *testing.T, e *env)) {
	cases = append(cases, conformanceCase{name, run})
}

type backend struct {
	name string
	open func(t *testing.T) *env
}

var nameSeq atomic.Int64

func uniqueName(t *testing.T) string {
	return fmt.Sprintf("latchkey-suite-%d-%d", time.Now().UnixNano(), nameSeq.Add(1))
}

var backends = []backend{
	{"miniredis", func(t *testing.T) *env {
		mr, _ := redistest.Miniredis(t)
		return &env{
			Name: uniqueName(t),
			Client: func() redis.UniversalClient {
				return closeLater(t, redis.NewClient(&redis.Options{Addr: mr.Addr()}))
			},
			Advance: mr.FastForward,
		}
	}},
	{"redis", func(t *testing.T) *env {
		s := redistest.SharedServer(t)
		return &env{
			Name: uniqueName(t),
			Client: func() redis.UniversalClient {
				return closeLater(t, redis.NewClient(&redis.Options{Addr: s.Addr()}))
			},
			Advance: time.Sleep,
			Real:    true,
		}
	}},
	{"cluster", func(t *testing.T) *env {
		c := redistest.SharedCluster(t)
		return &env{
			Name: uniqueName(t),
			Client: func() redis.UniversalClient {
				return closeLater(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()}))
			},
			Advance: time.Sleep,
			Real:    true,
		}
	}},
}

func TestMain(m *testing.M) { redistest.Main(m) }

// The backends run side by side, but for the ACL users, one after the
// other (each case resets the server's ACL log, which the other's check
// reads): most of a case's time is spent waiting on a server, a lease or
// a grace.
func TestConformance(t *testing.T) {
	run := func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { c.run(t, b.open(t)) })
		}
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			run(t, b)
		})
	}
	t.Run("acl", func(t *testing.T) {
		t.Parallel()
		for _, b := range aclBackends {
			t.Run(b.name, func(t *testing.T) { run(t, b) })
		}
	})
}
