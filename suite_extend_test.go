package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// Every lock with a fixed lease can be extended: the hold outlives the lease
// it was taken with, Deadline follows, and a hold that is gone is never
// taken again by Extend.
func init() {
	const lease = 400 * time.Millisecond
	type extendable interface {
		Lock(ctx context.Context) error
		TryLock(ctx context.Context, wait time.Duration) (bool, error)
		Unlock(ctx context.Context) error
		Extend(ctx context.Context, d time.Duration) error
		Deadline() time.Time
		Err() error
	}
	for _, kind := range []struct {
		name string
		open func(e *env) extendable
	}{
		{"mutex", func(e *env) extendable { return mutex.New(e.Client(), e.Name, mutex.WithLease(lease)) }},
		{"fairlock", func(e *env) extendable { return fairlock.New(e.Client(), e.Name, fairlock.WithLease(lease)) }},
		{"rwlock write", func(e *env) extendable {
			return rwlock.New(e.Client(), e.Name, rwlock.WithLease(lease)).WriteLock()
		}},
		{"redlock", func(e *env) extendable {
			// The default node timeout, a twentieth of the lease (20ms),
			// is too short for a loaded machine's cluster.
			return redlock.New([]redis.UniversalClient{e.Client()}, e.Name, redlock.WithLease(lease),
				redlock.WithNodeTimeout(lease/2))
		}},
	} {
		register("contract/"+kind.name+" extend", func(t *testing.T, e *env) {
			ctx := context.Background()
			l := kind.open(e)
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			if err := l.Extend(ctx, 20*lease); err != nil {
				t.Fatalf("Extend = %v", err)
			}
			if d := l.Deadline().Sub(sent); d > 20*lease || d < 19*lease {
				t.Errorf("Deadline %v after Extend(%v)'s send", d, 20*lease)
			}
			e.Advance(2 * lease)
			if err := l.Err(); err != nil {
				t.Fatalf("hold ended past its lease although extended: %v", err)
			}
			if ok, err := kind.open(e).TryLock(ctx, 0); ok || err != nil {
				t.Fatalf("a competitor's TryLock on the extended lock = %v, %v", ok, err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatalf("Unlock = %v", err)
			}
			if err := l.Extend(ctx, lease); !errors.Is(err, latchkey.ErrNotHeld) {
				t.Errorf("Extend after Unlock = %v, want ErrNotHeld", err)
			}
			if ok, err := kind.open(e).TryLock(ctx, 0); !ok || err != nil {
				t.Errorf("Extend after Unlock left the lock held: TryLock = %v, %v", ok, err)
			}
		})
	}
}
