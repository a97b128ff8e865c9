package redlock_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/redlock"
)

// 8 clients, each with its own connections to the 5 nodes as separate
// processes would have, take the lock in turn: never two holders at once.
// Half of them also listen for unlock messages through a Hub.
func TestMutex_mutualExclusion(t *testing.T) {
	const (
		workers = 8
		rounds  = 10
	)
	ss := servers(t, 5)
	name := lockName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	var (
		holders, overlaps, total atomic.Int64
		mu                       sync.Mutex
		waits                    []time.Duration
		errs                     = make([]error, workers)
		wg                       sync.WaitGroup
	)
	for w := range workers {
		cs := clients(t, ss)
		opts := []redlock.Option{redlock.WithRetryDelay(30 * time.Millisecond), redlock.WithNodeTimeout(time.Second)}
		if w%2 == 0 {
			opts = append(opts, redlock.WithHub(pubsub.Shared(cs[w%len(cs)])))
		}
		m := redlock.New(cs, name, opts...)
		wg.Go(func() {
			for range rounds {
				start := time.Now()
				if err := m.Lock(ctx); err != nil {
					errs[w] = err
					return
				}
				mu.Lock()
				waits = append(waits, time.Since(start))
				mu.Unlock()
				if holders.Add(1) > 1 {
					overlaps.Add(1)
				}
				total.Add(1)
				time.Sleep(3 * time.Millisecond)
				holders.Add(-1)
				if err := m.Unlock(context.WithoutCancel(ctx)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
		}
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d acquisitions overlapped another holder", n)
	}
	if n := total.Load(); n != workers*rounds {
		t.Errorf("%d acquisitions, want %d", n, workers*rounds)
	}
	slices.Sort(waits)
	if len(waits) > 0 {
		t.Logf("%d acquisitions; Lock latency median %v, max %v", len(waits), waits[len(waits)/2], waits[len(waits)-1])
	}
}
