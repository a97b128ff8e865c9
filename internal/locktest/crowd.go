package locktest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A Crowd keeps a lock or a semaphore's permits busy, as services that
// contend for it without pause would: each member loops acquire, hold,
// release until the crowd stops. Every holder, the crowd's and any other
// that calls Inside, is counted, so that a test sees whether more held at
// once than the capacity allows.
type Crowd struct {
	capacity int64
	hold     time.Duration
	acquired atomic.Int64
	holders  atomic.Int64
	over     atomic.Bool
	stop     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	errs     []error
}

// NewCrowd returns a crowd whose holders hold for hold, capacity of them
// at most at once.
func NewCrowd(capacity int, hold time.Duration) *Crowd {
	return &Crowd{capacity: int64(capacity), hold: hold}
}

// Go starts a member that loops acquire, Inside, release.
func (c *Crowd) Go(ctx context.Context, acquire, release func(context.Context) error) {
	c.wg.Go(func() {
		for !c.stop.Load() {
			err := acquire(ctx)
			if err == nil {
				c.acquired.Add(1)
				c.Inside()
				err = release(ctx)
			}
			if err != nil {
				c.mu.Lock()
				c.errs = append(c.errs, err)
				c.mu.Unlock()
				return
			}
		}
	})
}

// Inside counts a holder for the hold time.
func (c *Crowd) Inside() {
	if c.holders.Add(1) > c.capacity {
		c.over.Store(true)
	}
	time.Sleep(c.hold)
	c.holders.Add(-1)
}

// Acquired returns how many acquisitions the members made so far.
func (c *Crowd) Acquired() int64 { return c.acquired.Load() }

// WaitAcquired waits until the members made n acquisitions more than
// they had when it was called, or ctx ends.
func (c *Crowd) WaitAcquired(ctx context.Context, n int64) {
	for until := c.Acquired() + n; c.Acquired() < until && ctx.Err() == nil; {
		time.Sleep(5 * time.Millisecond)
	}
}

// Turns has another client, one not in the crowd, take its turn rounds
// times: acquire, Inside, release. It returns how many acquisitions the
// members made while it waited, per round, and lets them make a few more
// between rounds. A failed turn stops the crowd and fails t.
func (c *Crowd) Turns(ctx context.Context, t testing.TB, rounds int, acquire, release func(context.Context) error) []int64 {
	t.Helper()
	var waited []int64
	for range rounds {
		before := c.Acquired()
		err := acquire(ctx)
		waited = append(waited, c.Acquired()-before)
		if err == nil {
			c.Inside()
			err = release(ctx)
		}
		if err != nil {
			c.Stop(t)
			t.Fatalf("the client outside the crowd: %v", err)
		}
		c.WaitAcquired(ctx, 3)
	}
	return waited
}

// Stop stops the members, waits for them, and fails t if one failed or
// more held at once than the capacity allows.
func (c *Crowd) Stop(t testing.TB) {
	t.Helper()
	c.stop.Store(true)
	c.wg.Wait()
	for _, err := range c.errs {
		t.Errorf("a member of the crowd: %v", err)
	}
	if c.over.Load() {
		t.Errorf("more than %d held at once", c.capacity)
	}
}
