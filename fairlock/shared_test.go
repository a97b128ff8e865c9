package fairlock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
)

// TestSharedHandle: goroutines sharing a handle exclude each other like
// goroutines sharing a sync.Mutex, and each Unlock releases the hold of
// the goroutine that calls it, even while the previous holder's Unlock is
// still finishing its bookkeeping.
func TestSharedHandle(t *testing.T) {
	backends(t, func(t *testing.T, newClient clientMaker) {
		ctx, cancel := context.WithTimeout(testCtx(t), 20*time.Second)
		defer cancel()
		m := fairlock.New(newClient(), lockName())
		const goroutines, rounds = 4, 40
		var (
			wg    sync.WaitGroup
			errs  = make(chan error, goroutines)
			count int // guarded by m, and by mu for the race detector
			mu    sync.Mutex
		)
		for range goroutines {
			wg.Go(func() {
				for range rounds {
					if err := m.Lock(ctx); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					count++
					mu.Unlock()
					if err := m.Unlock(ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if count != goroutines*rounds {
			t.Fatalf("count = %d", count)
		}
	})
}
