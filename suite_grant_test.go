package latchkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
)

// A hold that a release granted to a waiter, with a fixed lease shorter
// than the grant's grace, ends with its lease when it is not unlocked: a
// newcomer takes the lock then, not once the grace is over. The grant is
// taken by an Extend right after Lock (on every backend), or by the
// waiter's own take soon after (on real servers, where time passes).
func init() {
	const lease = 50 * time.Millisecond
	type granted interface {
		Lock(ctx context.Context) error
		TryLock(ctx context.Context, wait time.Duration) (bool, error)
		Unlock(ctx context.Context) error
		Extend(ctx context.Context, d time.Duration) error
		Done() <-chan struct{}
	}
	for _, kind := range []struct {
		name  string
		queue func(name string) string
		open  func(e *env, lease time.Duration) granted
	}{
		{"mutex", func(n string) string { return keys.LockOf(n).Queue }, func(e *env, d time.Duration) granted {
			if d == 0 {
				return mutex.New(e.Client(), e.Name)
			}
			return mutex.New(e.Client(), e.Name, mutex.WithLease(d))
		}},
		{"fairlock", func(n string) string { return keys.LockOf(n).FairQueue }, func(e *env, d time.Duration) granted {
			if d == 0 {
				return fairlock.New(e.Client(), e.Name)
			}
			return fairlock.New(e.Client(), e.Name, fairlock.WithLease(d))
		}},
	} {
		register("contract/"+kind.name+" granted short lease lapses", func(t *testing.T, e *env) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			raw := e.observer()
			grant := func() granted {
				t.Helper()
				holder, waiter := kind.open(e, 0), kind.open(e, lease)
				if err := holder.Lock(ctx); err != nil {
					t.Fatal(err)
				}
				got := make(chan error, 1)
				go func() { got <- waiter.Lock(ctx) }()
				for raw.LLen(ctx, kind.queue(e.Name)).Val() == 0 {
					if ctx.Err() != nil {
						t.Fatal("the waiter never queued")
					}
					time.Sleep(2 * time.Millisecond)
				}
				if err := holder.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				if err := <-got; err != nil {
					t.Fatal(err)
				}
				return waiter
			}
			lapsed := func(how string) {
				t.Helper()
				if ok, err := kind.open(e, 0).TryLock(ctx, 0); !ok || err != nil {
					t.Fatalf("%s: a newcomer's TryLock once the granted hold's %v lease ran out = %v, %v; want the lock",
						how, lease, ok, err)
				}
			}

			w := grant()
			if err := w.Extend(ctx, lease); err != nil {
				t.Fatalf("Extend of the granted hold = %v", err)
			}
			e.Advance(2 * lease)
			lapsed("taken by Extend")
			if !e.Real {
				return
			}
			e.Name += ":taken"
			w = grant()
			select {
			case <-w.Done(): // taken, and then its lease ran out
			case <-ctx.Done():
				t.Fatal("the granted hold never ended")
			}
			for raw.Exists(ctx, e.Name).Val() == 1 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			lapsed("taken by its waiter")
		})
	}
}
