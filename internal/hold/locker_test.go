package hold

import (
	"context"
	"errors"
	"testing"
)

func TestLocker(t *testing.T) {
	var locks, unlocks int
	var failLock, failUnlock error
	l := Locker("mutex",
		func(ctx context.Context) error {
			if ctx.Done() != nil {
				t.Error("Lock's context can end")
			}
			locks++
			return failLock
		},
		func(ctx context.Context) error {
			if ctx.Done() != nil {
				t.Error("Unlock's context can end")
			}
			unlocks++
			return failUnlock
		})
	l.Lock()
	if locks != 1 || unlocks != 0 {
		t.Errorf("while held: lock called %d, unlock %d times; want 1 and 0", locks, unlocks)
	}
	l.Unlock()
	if locks != 1 || unlocks != 1 {
		t.Fatalf("lock called %d, unlock %d times; want 1 each", locks, unlocks)
	}

	failLock, failUnlock = errors.New("boom"), errors.New("not held")
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"Lock", l.Lock, "mutex: Locker: boom"},
		{"Unlock", l.Unlock, "mutex: Locker: not held"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("panic(%v), want panic(%q)", r, tc.want)
				}
			}()
			tc.call()
		})
	}
}
