package multilock_test

import (
	"context"
	"errors"
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
