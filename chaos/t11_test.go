package chaos

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// A permitSoak is a soak test of a semaphore: clients, each through its
// own proxy, take 1 to most permits of one semaphore of limit permits and
// give them back, while an injector puts faults in.
type permitSoak struct {
	clients      int
	limit, most  int64
	duration     time.Duration // before scaling by soak
	every        time.Duration // between faults; 0 injects none
	longest      time.Duration // longest network fault
	lease        time.Duration // lease of a permit; 0 for a semaphore without leases
	linearizable bool          // check the history with the semaphore model
	setup        func(ctx context.Context, admin *redis.Client, name string, limit int64) error
	open         func(c *redis.Client, name string, lease time.Duration) PermitWorker
	available    func(ctx context.Context, admin *redis.Client, name string) (int64, error)
}

func (s permitSoak) run(t *testing.T) {
	e := newStandalone(t, s.clients)
	r := newReport(t)
	h := newHistory()
	nm := name(t, 0)
	if err := s.setup(t.Context(), e.Admin, nm, s.limit); err != nil {
		t.Fatalf("set %d permits: %v", s.limit, err)
	}
	pr := &PermitRun{R: r, H: h, Holders: newHolders(r, h, s.limit), Most: s.most, AcquireTimeout: 2 * backstop, Hold: 2 * time.Millisecond}
	rnd := rng(t)
	var workers []PermitWorker
	for i, c := range e.Clients {
		w := s.open(c, nm, s.lease)
		w.Client, w.Name, w.Lease, w.Rand = i, nm, s.lease, rand.New(rand.NewPCG(rnd.Uint64(), uint64(i)))
		workers = append(workers, w)
	}
	ctx, cancel := context.WithTimeout(t.Context(), soak(s.duration))
	defer cancel()
	var wg sync.WaitGroup
	var inj *Injector
	if s.every > 0 {
		inj = newInjector(r, rand.New(rand.NewPCG(rnd.Uint64(), 0)), s.every,
			append(NetFaults(e.Proxies, s.longest), e.ServerFaults(time.Second)...)...)
		wg.Go(func() { inj.Run(ctx) })
	}
	for _, w := range workers {
		wg.Go(func() { pr.Run(ctx, w) })
	}
	wg.Wait()
	e.Heal()
	if inj != nil {
		t.Logf("faults: %s", inj)
	}
	t.Logf("%d operations; %d acquisitions ran out of %v; outcome unknown: %d permits acquired, %d released",
		h.Len(), pr.timeouts.Load(), pr.AcquireTimeout, pr.unknownAcquired.Load(), pr.unknownReleased.Load())
	if s.lease > 0 {
		time.Sleep(s.lease) // every permit lost on the way has expired
	}
	pr.Settle(t.Context(), s.lease+backstop+2*time.Second, workers)
	s.conserved(t, r, e.Admin, nm, pr)
	if s.linearizable {
		checkLinearizable(t, r, t.Name(), semaphoreModel(s.limit), h.Ops(), 30*time.Second)
	}
}

// conserved checks the permits once every worker has given back what it
// knows it holds: never more than the limit (a release applied twice),
// never fewer than the limit less what outcome-unknown calls may have
// taken (a permit lost for good); with leases, exactly the limit.
func (s permitSoak) conserved(t *testing.T, r *Report, admin *redis.Client, name string, pr *PermitRun) {
	if s.lease > 0 {
		time.Sleep(s.lease)
	}
	avail, err := s.available(t.Context(), admin, name)
	if err != nil {
		t.Fatalf("available permits: %v", err)
	}
	lowest := s.limit - pr.unknownAcquired.Load() - pr.unknownReleased.Load()
	if s.lease > 0 {
		lowest = s.limit
	}
	switch {
	case avail > s.limit:
		r.Violation("%s: %d permits available at rest, above the limit of %d: releases were applied more than once", name, avail, s.limit)
	case avail < max(lowest, 0):
		r.Violation("%s: %d permits available at rest, want at least %d: permits were lost for good", name, avail, lowest)
	default:
		t.Logf("%s: %d of %d permits available at rest", name, avail, s.limit)
	}
}

func setSemaphore(ctx context.Context, admin *redis.Client, name string, limit int64) error {
	_, err := semaphore.New(admin, name).TrySetPermits(ctx, limit)
	return err
}

func semaphoreAvailable(ctx context.Context, admin *redis.Client, name string) (int64, error) {
	return semaphore.New(admin, name).AvailablePermits(ctx)
}

func openSemaphore(c *redis.Client, name string, _ time.Duration) PermitWorker {
	s := semaphore.New(c, name)
	return PermitWorker{Acquire: func(ctx context.Context, n int64) (func(context.Context) error, error) {
		if err := s.Acquire(ctx, n); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return s.Release(ctx, n) }, nil
	}}
}

func setPermitSemaphore(ctx context.Context, admin *redis.Client, name string, limit int64) error {
	_, err := permitsemaphore.New(admin, name).TrySetPermits(ctx, limit)
	return err
}

func permitSemaphoreAvailable(ctx context.Context, admin *redis.Client, name string) (int64, error) {
	return permitsemaphore.New(admin, name).AvailablePermits(ctx)
}

func openPermitSemaphore(c *redis.Client, name string, lease time.Duration) PermitWorker {
	s := permitsemaphore.New(c, name)
	return PermitWorker{Retry: true, Acquire: func(ctx context.Context, n int64) (func(context.Context) error, error) {
		ps, err := s.AcquireN(ctx, int(n), permitsemaphore.Lease(lease))
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(ps))
		for i, p := range ps {
			ids[i] = p.ID()
		}
		return func(ctx context.Context) error { return s.ReleaseAll(ctx, ids...) }, nil
	}}
}

// TestT11SemaphoreNoOverAdmission: 20 clients take 1 to 3 permits of a
// 5-permit semaphore under the network and server faults of T02. The
// permits held by clients that know they hold them never exceed 5, the
// history is linearizable, every client gets a permit within its bound
// once the faults heal, and the count at rest is within what the
// outcome-unknown calls explain.
func TestT11SemaphoreNoOverAdmission(t *testing.T) {
	permitSoak{
		clients: 20, limit: 5, most: 3,
		duration: 30 * time.Second, every: 200 * time.Millisecond, longest: 3 * time.Second,
		linearizable: true,
		setup:        setSemaphore, open: openSemaphore, available: semaphoreAvailable,
	}.run(t)
}

// TestT11PermitSemaphoreNoOverAdmission is T11 on the semaphore whose
// permits have ids and a 2s lease; at rest, once the leases of permits
// lost on the way have run out, exactly the limit is available.
func TestT11PermitSemaphoreNoOverAdmission(t *testing.T) {
	permitSoak{
		clients: 20, limit: 5, most: 3,
		duration: 20 * time.Second, every: 200 * time.Millisecond, longest: 3 * time.Second,
		lease: 2 * time.Second,
		setup: setPermitSemaphore, open: openPermitSemaphore, available: permitSemaphoreAvailable,
	}.run(t)
}
