package latchkey_test

import (
	"context"
	"errors"
	"testing"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
)

// The caller's contract at the clean-up edge: an unlock, release or
// count-down given a ctx that already ended returns at once, with an error
// matching ctx.Err(), and still frees what it frees, in the background, for
// plain and owner holds alike, so that `defer m.Unlock(ctx)` with a
// request's ctx never leaves a lock held for its lease.

// endedCall checks the answer of a clean-up call given an ended ctx, and
// waits for the clean-up it left in the background.
func endedCall(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("%s with an ended ctx = %v, want nil or an error matching context.Canceled", what, err)
	}
	flight.Settle()
}

// ended returns a ctx that has been cancelled.
func ended() context.Context { return endedWith(context.Background()) }

func init() {
	for _, owned := range []bool{false, true} {
		mode := "plain"
		if owned {
			mode = "owner"
		}
		type locker interface {
			Lock(ctx context.Context) error
			Unlock(ctx context.Context) error
			IsLocked(ctx context.Context) (bool, error)
		}
		for _, kind := range []struct {
			name string
			open func(e *env) locker
		}{
			{"mutex", func(e *env) locker { return mutex.New(e.Client(), e.Name) }},
			{"fairlock", func(e *env) locker { return fairlock.New(e.Client(), e.Name) }},
			{"rwlock write", func(e *env) locker { return rwlock.New(e.Client(), e.Name) }},
			{"rwlock read", func(e *env) locker { return rwReader{rwlock.New(e.Client(), e.Name)} }},
		} {
			register("contract/"+kind.name+" unlock with an ended ctx ("+mode+")", func(t *testing.T, e *env) {
				l := kind.open(e)
				live := context.Background()
				if owned {
					live = latchkey.WithOwner(live)
				}
				if err := l.Lock(live); err != nil {
					t.Fatal(err)
				}
				ctx := ended()
				if owned {
					ctx = endedWith(live)
				}
				endedCall(t, "Unlock", l.Unlock(ctx))
				if held, err := kind.open(e).IsLocked(context.Background()); err != nil || held {
					t.Fatalf("IsLocked after the unlock = %v, %v; want false: the lock was stranded", held, err)
				}
			})
		}
	}

	register("contract/semaphore release with an ended ctx", func(t *testing.T, e *env) {
		ctx := context.Background()
		s := semaphore.New(e.Client(), e.Name)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		endedCall(t, "Release", s.Release(ended(), 1))
		if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("AvailablePermits = %d, %v; want 1: the permit was lost", n, err)
		}
	})
	register("contract/permitsemaphore release with an ended ctx", func(t *testing.T, e *env) {
		ctx := context.Background()
		s := permitsemaphore.New(e.Client(), e.Name)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		p, err := s.Acquire(ctx, permitsemaphore.Forever)
		if err != nil {
			t.Fatal(err)
		}
		endedCall(t, "Permit.Release", p.Release(ended()))
		if n, err := s.AvailablePermits(ctx); err != nil || n != 1 {
			t.Fatalf("AvailablePermits = %d, %v; want 1: the permit was lost", n, err)
		}
	})
	register("contract/countdownlatch count down with an ended ctx", func(t *testing.T, e *env) {
		ctx := context.Background()
		l := countdownlatch.New(e.Client(), e.Name)
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			t.Fatal(err)
		}
		endedCall(t, "CountDown", l.CountDown(ended()))
		if n, err := l.Count(ctx); err != nil || n != 0 {
			t.Fatalf("Count = %d, %v; want 0", n, err)
		}
	})
	register("contract/multilock unlock with an ended ctx", func(t *testing.T, e *env) {
		ctx := context.Background()
		a, b := mutex.New(e.Client(), e.Name+"-a"), mutex.New(e.Client(), e.Name+"-b")
		m := multilock.New(a, b)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		endedCall(t, "MultiLock.Unlock", m.Unlock(ended()))
		for _, l := range []*mutex.Mutex{a, b} {
			if held, err := l.IsLocked(ctx); err != nil || held {
				t.Fatalf("%s: IsLocked = %v, %v; want false", l.Name(), held, err)
			}
		}
	})
}

// endedWith returns a cancelled copy of ctx, which keeps ctx's owner.
func endedWith(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return ctx
}

// rwReader is an rwlock's read side as a lock.
type rwReader struct{ rw *rwlock.RWMutex }

func (r rwReader) Lock(ctx context.Context) error   { return r.rw.RLock(ctx) }
func (r rwReader) Unlock(ctx context.Context) error { return r.rw.RUnlock(ctx) }
func (r rwReader) IsLocked(ctx context.Context) (bool, error) {
	return r.rw.IsLocked(ctx)
}
