package chaos

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// clusterClient returns a cluster client of rc with the suite's timeouts,
// closed (with its latchkey resources) by t.Cleanup.
func clusterClient(t testing.TB, rc *redistest.ReplicatedCluster) *redis.ClusterClient {
	cc := rc.Client(t, func(o *redis.ClusterOptions) {
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dialTimeout, ioTimeout, ioTimeout
	})
	closeLater(t, cc)
	return cc
}

// A clusterLoad is a worker taking and releasing locks on a cluster
// during failovers, each through its own cluster client: every grant is
// checked against Holders, and every error is counted, since a failover
// must be transient within a call's budget.
type clusterLoad struct {
	r       *Report
	h       *History
	holders *Holders
	mu      sync.Mutex
	errs    []string
	// unsynced counts calls that failed closed with ErrNotReplicated: a
	// master whose clients a manual failover pauses sends its replicas no
	// GETACK, so a WAIT can only end with their once-a-second ack, and a
	// synced write may not be acknowledged within the WAIT's bound.
	unsynced int
}

// failoverPause bounds how long a call must ride out a failover: a manual
// failover that Redis cannot finish at once pauses the old master's clients
// for up to twice its 5s timeout, and an election after a kill takes the
// node timeout and some.
const failoverPause = 15 * time.Second

// run cycles on name through c until ctx ends. Its holds keep the default
// watchdog lease (30s), which outlasts a failover's pause.
func (cl *clusterLoad) run(ctx context.Context, client int, c redis.UniversalClient, name string) {
	m := mutex.New(c, name)
	for ctx.Err() == nil {
		lctx, cancel := context.WithTimeout(ctx, failoverPause)
		err := m.Lock(lctx)
		cancel()
		if err != nil {
			cl.fail(ctx, "lock", err)
			continue
		}
		cl.r.Acquired(1)
		cl.holders.Begin(name, hold{client: client, write: true, token: m.Token(), done: m.Done()})
		time.Sleep(5 * time.Millisecond)
		cl.holders.End(name, client)
		if isClosed(m.Done()) {
			cl.r.Lost()
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failoverPause)
		err = m.Unlock(uctx)
		cancel()
		if err != nil {
			cl.fail(ctx, "unlock", err)
		}
	}
}

func (cl *clusterLoad) fail(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return // the run ended
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if errors.Is(err, latchkey.ErrNotReplicated) {
		cl.unsynced++
		return
	}
	cl.errs = append(cl.errs, op+": "+err.Error())
}

// TestT19ClusterManualFailover: on a 3-master + 3-replica cluster, A holds
// a lock (default watchdog) while the replica of its slot's master takes
// over with CLUSTER FAILOVER, 5 times, back and forth; 4 workers lock and
// unlock other names of the same slot, and a contender tries A's lock
// every 100ms. A keeps its hold and unlocks at the end, the contender
// never gets it, no grant overlaps a live hold, and no call fails, but for
// synced writes that fail closed with ErrNotReplicated (see clusterLoad):
// a graceful failover is otherwise invisible to callers.
func TestT19ClusterManualFailover(t *testing.T) {
	rc := redistest.StartReplicatedCluster(t, 3)
	r := newReport(t)
	h := newHistory()
	cl := &clusterLoad{r: r, h: h, holders: newHolders(r, h, 0)}
	nm := "chaos:{t19}:held"
	// The default watchdog (30s): a manual failover that Redis abandons
	// pauses the master's writes for up to 5s.
	a := mutex.New(clusterClient(t, rc), nm)
	if err := a.Lock(t.Context()); err != nil {
		t.Fatalf("A: Lock: %v", err)
	}
	r.Acquired(1)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for i := range 4 {
		c := clusterClient(t, rc)
		wg.Go(func() { cl.run(ctx, i, c, "chaos:{t19}:w"+string(rune('0'+i))) })
	}
	b := mutex.New(clusterClient(t, rc), nm)
	wg.Go(func() {
		for ctx.Err() == nil {
			// A waiting contender, woken at once should A's hold go; its
			// budget rides out a failover's pause. A must have been told
			// of a loss before the contender's grant came back.
			if ok, err := b.TryLock(ctx, failoverPause); ok {
				if !isClosed(a.Done()) {
					r.Violation("the contender got the lock that A holds, and A was not told of any loss")
				}
				_ = b.Unlock(context.WithoutCancel(ctx))
				return // A's loss is reported at the end
			} else if err != nil {
				cl.fail(ctx, "contender trylock", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	for i := range 5 {
		master, replica, err := rc.MasterOf(t.Context(), nm)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := rc.ManualFailover(t.Context(), replica); err != nil {
			t.Fatalf("failover %d: %v", i, err)
		}
		r.Fault()
		t.Logf("failover %d: %s took over from %s in %v", i, replica.Addr(), master.Addr(), time.Since(start).Round(time.Millisecond))
		time.Sleep(500 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if isClosed(a.Done()) {
		r.Violation("A lost its hold across the manual failovers: %v", a.Err())
	} else if err := a.Unlock(t.Context()); err != nil {
		r.Violation("A: Unlock after the failovers: %v", err)
	}
	t.Logf("%d calls failed closed with ErrNotReplicated during the failovers", cl.unsynced)
	for i, e := range cl.errs {
		if i == 5 {
			r.Violation("... %d errors in all", len(cl.errs))
			break
		}
		r.Violation("a call failed during a manual failover: %s", e)
	}
}
