package chaos

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/permitsemaphore"
)

// t12Lease is the lease of the permits of T12.
const t12Lease = 2 * time.Second

// TestT12SemaphoreNoLostPermits: a 5-permit semaphore whose permits have
// leases. Two helper processes take 2 permits each and are killed with
// SIGKILL; meanwhile 4 clients take and give back permits, one reply in
// three of their releases lost (so go-redis sends the release again).
// Once everyone stopped and the 2s lease ran out, exactly 5 permits are
// available and none is counted as acquired.
func TestT12SemaphoreNoLostPermits(t *testing.T) {
	e := newStandalone(t, 4)
	r := newReport(t)
	h := newHistory()
	nm := name(t, 0)
	if err := setPermitSemaphore(t.Context(), e.Admin, nm, 5); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		c := redistest.StartChild(t, "TestT12Helper", "CHAOS_ADDR="+e.Server.Addr(), "CHAOS_NAME="+nm)
		c.WaitLine(t, "held", 10*time.Second)
		c.Kill()
		r.Fault()
		t.Logf("helper %d killed holding 2 permits", i)
	}
	pr := &PermitRun{R: r, H: h, Holders: newHolders(r, h, 5), Most: 1, AcquireTimeout: 2 * backstop, Hold: 2 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), soak(6*time.Second))
	defer cancel()
	var wg sync.WaitGroup
	rnd := rng(t)
	for i, c := range e.Clients {
		w := openPermitSemaphore(c, nm, t12Lease)
		w.Client, w.Name, w.Lease, w.Rand = i, nm, t12Lease, newRand(rnd, i)
		release := w.Acquire
		p := e.Proxies[i]
		// One release in three loses its first reply.
		w.Acquire = func(ctx context.Context, n int64) (func(context.Context) error, error) {
			rel, err := release(ctx, n)
			if err != nil || w.Rand.IntN(3) != 0 {
				return rel, err
			}
			return func(ctx context.Context) error {
				heal := p.LoseReplies(1)
				defer heal()
				r.Fault()
				return rel(ctx)
			}, nil
		}
		wg.Go(func() { pr.Run(ctx, w) })
	}
	wg.Wait()
	time.Sleep(t12Lease + 500*time.Millisecond)
	s := permitsemaphore.New(e.Admin, nm)
	avail, err := s.AvailablePermits(t.Context())
	acquired, err2 := s.AcquiredPermits(t.Context())
	if err != nil || err2 != nil {
		t.Fatalf("AvailablePermits: %v; AcquiredPermits: %v", err, err2)
	}
	if avail != 5 || acquired != 0 {
		r.Violation("%s: at rest, once every lease ran out: %d available and %d acquired, want 5 and 0", nm, avail, acquired)
	}
}

// TestT12Helper is the helper process of T12: it takes 2 permits with the
// T12 lease, says "held", and waits to be killed. It skips itself unless
// started by TestT12SemaphoreNoLostPermits.
func TestT12Helper(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("helper process of TestT12SemaphoreNoLostPermits")
	}
	c := newClient(t, os.Getenv("CHAOS_ADDR"))
	if _, err := permitsemaphore.New(c, os.Getenv("CHAOS_NAME")).AcquireN(t.Context(), 2, permitsemaphore.Lease(t12Lease)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
}
