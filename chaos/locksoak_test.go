package chaos

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// backstop is the longest a latchkey waiter sleeps without news (the wait
// loop's bound), which a liveness bound must allow for.
const backstop = 5 * time.Second

// A lockSoak is a soak test of a lock primitive: clients contending for a
// few names, each through its own proxy, while an injector puts faults in.
type lockSoak struct {
	names, perName int
	lease          time.Duration // watchdog timeout of every hold
	duration       time.Duration // before scaling by soak
	every          time.Duration // between faults; 0 injects none
	longest        time.Duration // longest network fault
	readShare      float64       // share of read acquisitions, for read-write locks
	model          porcupine.NondeterministicModel
	// open returns client c's handle on name: the exclusive side, the
	// read side (nil if none) and the fencing token (nil if none).
	open func(c *redis.Client, name string, lease time.Duration) (lock, rlock Locker, token func() int64)
}

// run runs the soak and checks its history: grants against live holds and
// the fenced resource as they happen, liveness once the faults heal, then
// fencing tokens and linearizability.
func (s lockSoak) run(t *testing.T) {
	e := newStandalone(t, s.names*s.perName)
	r := newReport(t)
	h := newHistory()
	lr := &LockRun{R: r, H: h, Holders: newHolders(r, h, 0), LockTimeout: 2 * backstop, Hold: 2 * time.Millisecond,
		Long: 0.0005, LongHold: 2 * s.lease, Reentrant: 0.2}
	rnd := rng(t)
	var workers []LockWorker
	for i, c := range e.Clients {
		w := LockWorker{Client: i, Name: name(t, i%s.names), Rand: rand.New(rand.NewPCG(rnd.Uint64(), uint64(i)))}
		w.Lock, w.RLock, w.Token = s.open(c, w.Name, s.lease)
		workers = append(workers, w)
	}
	ctx, cancel := context.WithTimeout(t.Context(), soak(s.duration))
	defer cancel()
	var wg sync.WaitGroup
	var inj *Injector
	if s.every > 0 {
		inj = newInjector(r, rand.New(rand.NewPCG(rnd.Uint64(), 0)), s.every,
			append(NetFaults(e.Proxies, s.longest), e.ServerFaults(s.lease/2)...)...)
		wg.Go(func() { inj.Run(ctx) })
	}
	for _, w := range workers {
		wg.Go(func() { lr.Run(ctx, w, s.readShare) })
	}
	wg.Wait()
	e.Heal()
	if inj != nil {
		t.Logf("faults: %s", inj)
	}
	t.Logf("%d operations, %d Lock calls ran out of %v", h.Len(), lr.timeouts.Load(), lr.LockTimeout)
	lr.Settle(t.Context(), s.lease+backstop+2*time.Second, workers)
	ops := h.Ops()
	checkTokens(r, ops)
	checkLinearizable(t, r, t.Name(), s.model, ops, 30*time.Second)
}
