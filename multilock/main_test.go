package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	// A stopped server is part of the tests: keep go-redis's dial errors
	// out of the output.
	redis.SetLogger(quiet{})
	redistest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// lockName returns a lock name unique to t.
func lockName(t *testing.T, i int) string {
	return "multilock-test:" + t.Name() + ":" + string(rune('a'+i))
}

// fakeLock is an in-memory Member with a plain, shared-handle lock's
// contract, counting its calls; fail, if set, is returned by every Lock and
// TryLock.
type fakeLock struct {
	token  chan struct{}
	fail   error
	tries  atomic.Int64
	unlock atomic.Int64
}

func newFake() *fakeLock { return &fakeLock{token: make(chan struct{}, 1)} }

func (f *fakeLock) Lock(ctx context.Context) error {
	if f.fail != nil {
		return f.fail
	}
	select {
	case f.token <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	f.tries.Add(1)
	if f.fail != nil {
		return false, f.fail
	}
	if wait <= 0 {
		select {
		case f.token <- struct{}{}:
			return true, nil
		default:
			return false, nil
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case f.token <- struct{}{}:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (f *fakeLock) Unlock(context.Context) error {
	f.unlock.Add(1)
	select {
	case <-f.token:
		return nil
	default:
		return latchkey.ErrNotHeld
	}
}

func (f *fakeLock) held() bool { return len(f.token) == 1 }

var errBroken = errors.New("broken member")

// reporter is a fakeLock that reports its holds' ends, as a LossReporter
// does; lose ends its hold as lost.
type reporter struct {
	*fakeLock
	mu   sync.Mutex // orders the ends of holds
	live bool
	cur  atomic.Pointer[fakeHold] // the latest hold, replaced as it ends
}

// A fakeHold is what a reporter says of one hold.
type fakeHold struct {
	done chan struct{}
	err  error
}

var _ multilock.LossReporter = (*reporter)(nil)

func newReporter() *reporter {
	r := &reporter{fakeLock: newFake()}
	r.cur.Store(&fakeHold{done: make(chan struct{})})
	close(r.cur.Load().done)
	return r
}

func (r *reporter) Lock(ctx context.Context) error {
	if err := r.fakeLock.Lock(ctx); err != nil {
		return err
	}
	r.took()
	return nil
}

func (r *reporter) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	ok, err := r.fakeLock.TryLock(ctx, wait)
	if ok {
		r.took()
	}
	return ok, err
}

func (r *reporter) took() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = true
	r.cur.Store(&fakeHold{done: make(chan struct{})})
}

func (r *reporter) Unlock(ctx context.Context) error {
	if !r.end(nil) {
		r.unlock.Add(1)
		return latchkey.ErrNotHeld
	}
	return nil
}

// lose ends the hold as lost, if there is one, and reports whether there was.
func (r *reporter) lose() bool {
	return r.end(fmt.Errorf("fake: %w: dropped by the test", latchkey.ErrLost))
}

// end ends the live hold, if any, with err as its Err, and reports whether
// there was one.
func (r *reporter) end(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.live {
		return false
	}
	r.live = false
	h := r.cur.Load()
	r.cur.Store(&fakeHold{done: h.done, err: err})
	close(h.done)
	_ = r.fakeLock.Unlock(context.Background())
	return true
}

func (r *reporter) Done() <-chan struct{} { return r.cur.Load().done }
func (r *reporter) Err() error            { return r.cur.Load().err }

// named is a reporter with a name.
type named struct {
	*reporter
	name string
}

func (n named) Name() string { return n.name }

// ended waits up to 5s for ch to close and reports whether it did.
func ended(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// hammer runs, for each lock at once, rounds of Lock, a hold of the given
// length and Unlock. It returns how many holds overlapped another, every
// Lock's latency in increasing order, and the workers' errors joined.
func hammer(ctx context.Context, locks []multilock.Member, rounds int, hold time.Duration) (overlaps int64, latencies []time.Duration, err error) {
	var (
		holders, overlapped atomic.Int64
		mu                  sync.Mutex
		errs                = make([]error, len(locks))
		wg                  sync.WaitGroup
	)
	for w, l := range locks {
		wg.Go(func() {
			for range rounds {
				start := time.Now()
				if err := l.Lock(ctx); err != nil {
					errs[w] = err
					return
				}
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
				if holders.Add(1) > 1 {
					overlapped.Add(1)
				}
				time.Sleep(hold)
				holders.Add(-1)
				if err := l.Unlock(context.WithoutCancel(ctx)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(latencies)
	return overlapped.Load(), latencies, errors.Join(errs...)
}
