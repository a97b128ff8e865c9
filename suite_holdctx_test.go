package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
)

// contextLock is what LockContext needs of a lock.
type contextLock interface {
	LockContext(ctx context.Context) (context.Context, error)
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
	ForceUnlock(ctx context.Context) (bool, error)
}

func init() {
	for _, kind := range []struct {
		name string
		open func(e *env) contextLock
	}{
		{"mutex", func(e *env) contextLock {
			return mutex.New(e.Client(), e.Name, mutex.WithWatchdogTimeout(600*time.Millisecond))
		}},
		{"fairlock", func(e *env) contextLock {
			return fairlock.New(e.Client(), e.Name, fairlock.WithWatchdogTimeout(600*time.Millisecond))
		}},
	} {
		// The context LockContext returns follows its own hold: another
		// goroutine's hold on the same handle does not keep it alive or end
		// it; an Unlock ends it as cancelled; a loss ends it with a cause
		// matching ErrLost.
		register(kind.name+"/lock-context", func(t *testing.T, e *env) {
			ctx := context.Background()
			l := kind.open(e)
			hctx, err := l.LockContext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := hctx.Err(); err != nil {
				t.Fatalf("hold context done while held: %v", err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			<-hctx.Done()
			if cause := context.Cause(hctx); !errors.Is(cause, context.Canceled) || errors.Is(cause, latchkey.ErrLost) {
				t.Fatalf("after Unlock, the cause is %v, want context.Canceled", cause)
			}

			// A hold lost while the handle goes on to hold again: the first
			// hold's context says lost, the second's stays live.
			first, err := l.LockContext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := l.ForceUnlock(ctx); !ok || err != nil {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
			e.Advance(time.Second) // past a renewal, which finds the hold gone
			select {
			case <-first.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the lost hold's context still live 5s after ForceUnlock")
			}
			if cause := context.Cause(first); !errors.Is(cause, latchkey.ErrLost) {
				t.Fatalf("lost hold's cause = %v, want ErrLost", cause)
			}
			second, err := l.LockContext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := second.Err(); err != nil {
				t.Fatalf("a new hold's context is done: %v", err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
