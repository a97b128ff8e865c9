package wait_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/wait"
)

// A Hub closed under a waiter ends the wait with ErrClosed; a Hub closed
// before makes the subscription fail with ErrClosed.
func TestUntil_hubClosed(t *testing.T) {
	t.Run("while waiting", func(t *testing.T) {
		h, _ := hubOn(t)
		f := &fake{retry: longBusy}
		done := run(context.Background(), -1, f.spec(h, t.Name()))
		untilAttempts(t, f, 2)
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		r := await(t, done)
		if r.ok || !errors.Is(r.err, lockerr.ErrClosed) {
			t.Fatalf("Until = %v, %v; want ErrClosed", r.ok, r.err)
		}
		f.checkAbandoned(t, 1)
	})
	t.Run("before", func(t *testing.T) {
		h, _ := hubOn(t)
		_ = h.Close()
		f := &fake{retry: longBusy}
		r := await(t, run(context.Background(), time.Hour, f.spec(h, t.Name())))
		if r.ok || !errors.Is(r.err, lockerr.ErrClosed) {
			t.Fatalf("Until = %v, %v; want ErrClosed", r.ok, r.err)
		}
		f.checkAbandoned(t, 1)
	})
}

// Success never runs Abandon, whichever attempt succeeds.
func TestUntil_successNeverAbandons(t *testing.T) {
	h, _ := hubOn(t)
	for _, on := range []int{1, 2, 4} {
		f := &fake{retry: 10 * time.Millisecond}
		var n atomic.Int32
		s := f.spec(h, t.Name())
		s.Call = f.call(func(ctx context.Context) (bool, time.Duration, error) {
			_, retry, err := f.attempt(ctx)
			return n.Add(1) >= int32(on), retry, err
		})
		r := await(t, run(context.Background(), time.Hour, s))
		if !r.ok || r.err != nil {
			t.Fatalf("success on attempt %d: Until = %v, %v", on, r.ok, r.err)
		}
		f.checkAbandoned(t, 0)
	}
	if st := h.Stats(); st.Waiters != 0 {
		t.Errorf("Stats() = %+v, want no waiter left", st)
	}
}

// Without a Hub the loop sleeps only for the attempts' retry bounds.
func TestUntil_noHub(t *testing.T) {
	f := &fake{retry: 30 * time.Millisecond}
	done := run(context.Background(), -1, wait.Spec{Call: f.call(f.attempt)})
	untilAttempts(t, f, 3)
	f.succeed.Store(true)
	if r := await(t, done); !r.ok || r.err != nil {
		t.Fatalf("Until = %v, %v; want true, nil", r.ok, r.err)
	}
	f.checkAbandoned(t, 0)
}

// flipCtx is a context cancelled at the first look at its Done channel once
// armed: Subscribe then sees its confirmation and the cancellation at once.
type flipCtx struct {
	context.Context
	armed atomic.Bool
	once  sync.Once
	done  chan struct{}
}

func (c *flipCtx) Done() <-chan struct{} {
	if c.armed.Load() {
		c.once.Do(func() { close(c.done) })
	}
	return c.done
}

func (c *flipCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// A ctx that ends just as the subscription succeeds must not leave the
// waiter registered on the Hub.
func TestUntil_ctxEndsAsSubscribed(t *testing.T) {
	h, _ := hubOn(t)
	ch := t.Name()
	other, err := h.Subscribe(context.Background(), ch, notify.WakeOne) // confirmed: no I/O below
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := range 40 {
		ctx := &flipCtx{Context: context.Background(), done: make(chan struct{})}
		f := &fake{retry: longBusy}
		s := f.spec(h, ch)
		s.Call = f.call(func(c context.Context) (bool, time.Duration, error) {
			ctx.armed.Store(true)
			return f.attempt(c)
		})
		_, err := wait.Until(ctx, -1, s)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: Until = %v, want context.Canceled", i, err)
		}
		if st := h.Stats(); st.Waiters != 1 {
			t.Fatalf("round %d: Stats() = %+v, want only the other waiter: the subscription leaked", i, st)
		}
		f.checkAbandoned(t, 1)
	}
}
