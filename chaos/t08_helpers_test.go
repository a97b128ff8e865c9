package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey"
)

// reentrantUnlock takes a lock twice as one owner, loses the reply of one
// unlock, and checks that exactly one hold was released: the hold count
// (if count is given) is 1, the hold was not signalled lost, and another
// client still cannot take the lock. It then releases the other hold.
func reentrantUnlock(e lostReply, h Locker, lock, unlock func(context.Context) error,
	count func(context.Context) (int, error), otherTry func(context.Context, time.Duration) (bool, error)) string {
	ctx := latchkey.WithOwner(context.Background())
	for range 2 {
		if err := lock(ctx); err != nil {
			return "setup: " + err.Error()
		}
	}
	defer func() { _ = unlock(ctx) }()
	uerr := e.lose(func(c context.Context) error { return unlock(latchkey.WithOwnerID(c, latchkey.OwnerID(ctx))) })
	if count != nil {
		n, err := count(ctx)
		switch {
		case err != nil:
			return "HoldCount: " + err.Error()
		case n == 0:
			return fmt.Sprintf("one reentrant unlock (returned %v) released both holds", uerr)
		case n != 1 && uerr == nil:
			return fmt.Sprintf("unlock returned nil but the hold count is %d, want 1", n)
		}
	}
	if ok, err := otherTry(context.Background(), 0); ok || err != nil {
		return fmt.Sprintf("another client took the lock (%v, %v) while its owner still held one of two holds; the unlock returned %v", ok, err, uerr)
	}
	if isClosed(h.Done()) {
		return fmt.Sprintf("after one unlock (returned %v) of two reentrant holds, the owner's Done is closed (Err %v): both holds ended", uerr, h.Err())
	}
	return ""
}

// permitCounts sets 5 permits (or a count), optionally runs before, then
// runs act with a lost reply, and checks the count afterwards: want if act
// returned nil; want or unapplied if it returned an error.
func permitCounts(e lostReply, set func(context.Context, int64) (bool, error), before, act func(context.Context) error,
	count func(context.Context) (int64, error), want, unapplied int64) string {
	ctx := context.Background()
	if _, err := set(ctx, 5); err != nil {
		return "setup: " + err.Error()
	}
	if before != nil {
		if err := before(ctx); err != nil {
			return "setup: " + err.Error()
		}
	}
	err := e.lose(act)
	n, cerr := count(ctx)
	switch {
	case cerr != nil:
		return "count: " + cerr.Error()
	case err == nil && n != want:
		return fmt.Sprintf("the call returned nil; count %d, want %d (applied %s)", n, want, times(n, want, unapplied))
	case err != nil && n != want && n != unapplied:
		return fmt.Sprintf("the call returned %v; count %d, want %d (applied) or %d (not applied)", err, n, want, unapplied)
	}
	return ""
}

// times describes how many times a write seems to have been applied.
func times(n, want, unapplied int64) string {
	step := want - unapplied
	if step == 0 {
		return "?"
	}
	return fmt.Sprintf("%d times", (n-unapplied)/step)
}

// trySet runs a TrySet of 5 on a fresh name with a lost reply: it must
// report that it set, and set 5.
func trySet(e lostReply, set func(context.Context, int64) (bool, error), count func(context.Context) (int64, error)) string {
	var ok bool
	err := e.lose(func(ctx context.Context) (err error) { ok, err = set(ctx, 5); return err })
	n, cerr := count(context.Background())
	switch {
	case cerr != nil:
		return "count: " + cerr.Error()
	case err == nil && !ok && n == 5:
		return "TrySet reported false although it set the count to 5"
	case err == nil && ok && n != 5:
		return fmt.Sprintf("TrySet reported true but the count is %d", n)
	}
	return ""
}
