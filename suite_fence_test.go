package latchkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
)

// counterLife is how long a fencing counter lives after its start or its
// latest refresh (see scripts/fragment/fence.lua).
const counterLife = 24 * time.Hour

// A lock's fencing counter expires, so that lock names no longer used
// leave no key behind for ever, and every 256th token refreshes it;
// tokens still strictly increase across its expiry, and across a counter
// that a client which never seeds it (a Redisson RFencedLock) started
// again from 1.
func init() {
	type fenced interface {
		Lock(ctx context.Context) error
		Unlock(ctx context.Context) error
		Token() int64
	}
	for _, kind := range []struct {
		name    string
		counter func(name string) string
		open    func(e *env) fenced
	}{
		{"mutex", func(n string) string { return keys.LockOf(n).Token }, func(e *env) fenced {
			return mutex.New(e.Client(), e.Name)
		}},
		{"fairlock", func(n string) string { return keys.LockOf(n).FairToken }, func(e *env) fenced {
			return fairlock.New(e.Client(), e.Name)
		}},
		{"rwlock write", func(n string) string { return keys.RWLockOf(n).Token }, func(e *env) fenced {
			return rwlock.New(e.Client(), e.Name).WriteLock()
		}},
	} {
		register("contract/"+kind.name+" fencing counter expires", func(t *testing.T, e *env) {
			ctx := context.Background()
			raw, counter := e.observer(), kind.counter(e.Name)
			last := int64(0)
			draw := func(after string) {
				t.Helper()
				l := kind.open(e)
				if err := l.Lock(ctx); err != nil {
					t.Fatal(err)
				}
				if tok := l.Token(); tok <= last {
					t.Errorf("token %d after %s, not above the one before, %d", tok, after, last)
				} else {
					last = tok
				}
				if err := l.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				if ttl := raw.PTTL(ctx, counter).Val(); ttl <= 0 || ttl > counterLife {
					t.Errorf("counter's PTTL %v after %s, want within %v", ttl, after, counterLife)
				}
			}
			draw("the first acquisition")
			draw("a second one")
			raw.PExpire(ctx, counter, time.Millisecond)
			e.Advance(10 * time.Millisecond)
			if n := raw.Exists(ctx, counter).Val(); n != 0 {
				t.Fatalf("counter still there after its expiry")
			}
			draw("the counter expired")
			raw.Set(ctx, counter, 5, 0) // as a Redisson RFencedLock starts one
			draw("a counter started again from 1")
			// Every 256th token refreshes the counter's life.
			raw.Set(ctx, counter, (last/256+1)*256-1, time.Minute)
			draw("a 256th token")
			if ttl := raw.PTTL(ctx, counter).Val(); ttl <= time.Minute {
				t.Errorf("counter's PTTL %v after a 256th token, want its life refreshed", ttl)
			}
		})
	}
}
