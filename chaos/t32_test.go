package chaos

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/redis/go-redis/v9"
)

// t32Rounds is how many soaks of each semaphore T32 runs: in about one in
// ten, before issue 31, permits stayed parked.
const t32Rounds = 4

// TestT32PermitsConserved: twelve clients take and give back permits of a
// 4-permit semaphore while connections are killed and reset now and then
// (and SCRIPT FLUSH, and short SIGSTOPs). Once the faults heal and the
// calls and their clean-ups are done, every permit is back: in the count a
// Redisson client reads (the plain integer) and in AvailablePermits. Then
// one client takes the 4 permits, the eleven others wait, and the permits
// are given back as the waits are cancelled and every client is closed at
// once, as processes that end: with nothing running, the count is 4 less
// what the waiters that got a permit hold, within the grace and a second.
// Permits granted to waiters that gave up are never parked (issue 31).
// Permit semaphores' permits have no lease here, so that none comes back
// by expiring.
func TestT32PermitsConserved(t *testing.T) {
	kinds := []struct {
		name      string
		setup     func(ctx context.Context, admin *redis.Client, name string, limit int64) error
		open      func(c *redis.Client, name string, lease time.Duration) PermitWorker
		available func(ctx context.Context, admin *redis.Client, name string) (int64, error)
	}{
		{"semaphore", setSemaphore, openSemaphore, semaphoreAvailable},
		{"permitsemaphore", setPermitSemaphore, openPermitSemaphore, permitSemaphoreAvailable},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := newReport(t)
			for round := range t32Rounds {
				e := newStandalone(t, 12)
				nm := name(t, round)
				conserveRound(t, r, e, nm, round, k.setup, k.open, k.available)
				closeAtOnce(t, r, e, nm+":close", round, k.setup, k.open)
			}
		})
	}
}

// closeAtOnce runs the end of a round of T32 on the clients of e, once
// the soak is over: see locktest.CloseAtOnce.
func closeAtOnce(t *testing.T, r *Report, e *Standalone, nm string, round int,
	setup func(context.Context, *redis.Client, string, int64) error,
	open func(*redis.Client, string, time.Duration) PermitWorker) {
	sem := locktest.Semaphore{
		Fill: func(ctx context.Context, c *redis.Client, name string) (func(context.Context) error, error) {
			if err := setup(ctx, c, name, 4); err != nil {
				return nil, err
			}
			return open(c, name, 0).Acquire(ctx, 4)
		},
		Acquire: func(ctx context.Context, c *redis.Client, name string) error {
			_, err := open(c, name, 0).Acquire(ctx, 1)
			return err
		},
	}
	got := locktest.CloseAtOnce(t, e.Admin, e.Clients[0], e.Clients[1:], nm, sem, time.Duration(round%4)*time.Millisecond)
	want, v := strconv.Itoa(4-got), ""
	deadline := time.Now().Add(handoff.Grace + time.Second)
	for v != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		v, _ = e.Admin.Get(t.Context(), nm).Result()
	}
	if v != want {
		r.Violation("%s: %d waiters acquired, and once every client closed at once, %v later, the count a Redisson client reads is %q, want %s: permits are parked", nm, got, handoff.Grace+time.Second, v, want)
	}
}

// conserveRound runs the soak of a round of T32 on the clients of e and
// the semaphore nm, and checks the permits at rest.
func conserveRound(t *testing.T, r *Report, e *Standalone, nm string, round int,
	setup func(context.Context, *redis.Client, string, int64) error,
	open func(*redis.Client, string, time.Duration) PermitWorker,
	available func(context.Context, *redis.Client, string) (int64, error)) {
	const limit = 4
	ctx := t.Context()
	h := newHistory()
	if err := setup(ctx, e.Admin, nm, limit); err != nil {
		t.Fatalf("set %d permits: %v", limit, err)
	}
	pr := &PermitRun{R: r, H: h, Holders: newHolders(r, h, limit), Most: 1, AcquireTimeout: 2 * backstop, Hold: 2 * time.Millisecond}
	rnd := rand.New(rand.NewPCG(rng(t).Uint64(), uint64(round)))
	faults := []Fault{
		{"reset-on-reply", 2, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return e.Proxies[rnd.IntN(len(e.Proxies))].Reset("downstream"), between(rnd, 5*time.Millisecond, 50*time.Millisecond)
		}},
	}
	faults = append(faults, e.ServerFaults(200*time.Millisecond)...)
	inj := newInjector(r, rand.New(rand.NewPCG(rnd.Uint64(), 0)), 100*time.Millisecond, faults...)
	sctx, stop := context.WithTimeout(ctx, soak(3*time.Second))
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { inj.Run(sctx) })
	for i, c := range e.Clients {
		w := open(c, nm, 0)
		w.Client, w.Name, w.Rand = i, nm, newRand(rnd, i)
		wg.Go(func() { pr.Run(sctx, w) })
	}
	wg.Wait() // the soak's end cancelled the waits
	e.Heal()
	flight.Settle() // the clean-ups the cancelled calls left, done
	// The plain count first: AvailablePermits gives back what it finds
	// due, which would hide a parked permit from the next look.
	want, v := strconv.Itoa(limit), ""
	deadline := time.Now().Add(handoff.Grace + time.Second)
	for v != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		v, _ = e.Admin.Get(ctx, nm).Result()
	}
	n, err := available(ctx, e.Admin, nm)
	if v != want || n != limit || err != nil {
		r.Violation("%s: the faults healed and nothing running, %v later the count a Redisson client reads is %q and AvailablePermits %d (%v); want %d: permits are parked or lost",
			nm, handoff.Grace+time.Second, v, n, err, limit)
		return
	}
	t.Logf("round %d: faults %s; all %d permits back", round, inj, limit)
}
