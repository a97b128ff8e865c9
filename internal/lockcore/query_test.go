package lockcore_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/owner"
)

func TestQueries(t *testing.T) {
	f := &fake{}
	l, mr := newLock(t, f)
	// Granted attempts write the hash as the script would.
	f.attempt = func(n int, w *lockcore.Waiter) (lockcore.Attempt, error) {
		mr.HIncr(l.Name, w.ID, 1)
		return lockcore.Attempt{OK: true, Token: int64(n), Holds: 1}, nil
	}
	ctx := context.Background()
	octx := latchkey.WithOwner(ctx)
	id, _ := owner.FromContext(octx)

	if ok, err := l.IsLocked(ctx); ok || err != nil {
		t.Errorf("IsLocked of a free lock = %v, %v", ok, err)
	}
	if d, err := l.TTL(ctx); d != 0 || err != nil {
		t.Errorf("TTL of a free lock = %v, %v; want 0", d, err)
	}
	for _, c := range []context.Context{ctx, octx} {
		if n, err := l.HoldCount(c); n != 0 || err != nil {
			t.Errorf("HoldCount of a free lock = %d, %v", n, err)
		}
	}

	mustLock(t, l, ctx)
	if ok, err := l.IsLocked(ctx); !ok || err != nil {
		t.Errorf("IsLocked = %v, %v; want true", ok, err)
	}
	// Without an owner: the handle's current plain hold.
	if n, err := l.HoldCount(ctx); n != 1 || err != nil {
		t.Errorf("plain HoldCount = %d, %v; want 1", n, err)
	}
	if n, err := l.HoldCount(octx); n != 0 || err != nil {
		t.Errorf("HoldCount of an owner that holds nothing = %d, %v; want 0", n, err)
	}
	if d, err := l.TTL(ctx); d >= 0 || err != nil {
		t.Errorf("TTL of a key without one = %v, %v; want negative", d, err)
	}
	mr.SetTTL(l.Name, 10*time.Second)
	if d, err := l.TTL(ctx); d != 10*time.Second || err != nil {
		t.Errorf("TTL = %v, %v; want 10s", d, err)
	}

	mustLock(t, l, octx)
	mustLock(t, l, octx)
	if n, err := l.HoldCount(octx); n != 2 || err != nil {
		t.Errorf("owner's HoldCount = %d, %v; want 2", n, err)
	}
	if got := mr.HGet(l.Name, id); got != "2" {
		t.Errorf("the owner's field holds %q, want 2", got)
	}
	// The plain hold is still the handle's newest plain one.
	if n, err := l.HoldCount(ctx); n != 1 || err != nil {
		t.Errorf("plain HoldCount = %d, %v; want 1", n, err)
	}

	mr.Set("str", "x")
	s := lockcore.New(l.Client, "testlock", "str", l.Cfg, f)
	if _, err := s.HoldCount(octx); err == nil {
		t.Error("HoldCount of a key of another type: no error")
	}
}
