package countdownlatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// A lost message costs a waiter at most the wait loop's backstop. Two ways
// to lose one: the waiter's Hub listens on another server (the CountDown's
// message goes where nobody hears it), and a plain DEL that publishes
// nothing at all.
func TestLatch_Wait_lostMessage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hub   func(t *testing.T) *pubsub.Hub
		clear func(ctx context.Context, c *redis.Client, l *countdownlatch.Latch) error
	}{
		{"deafHub", func(t *testing.T) *pubsub.Hub {
			elsewhere, _ := mini(t)
			h := pubsub.New(elsewhere)
			t.Cleanup(func() { _ = h.Close() })
			return h
		}, func(ctx context.Context, _ *redis.Client, l *countdownlatch.Latch) error {
			return l.CountDown(ctx)
		}},
		{"plainDel", func(*testing.T) *pubsub.Hub { return nil },
			func(ctx context.Context, c *redis.Client, l *countdownlatch.Latch) error {
				return c.Del(ctx, l.Name()).Err()
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mini(t)
			ctx := context.Background()
			h := tc.hub(t)
			l := countdownlatch.New(c, latchName(t), countdownlatch.WithHub(h))
			if h == nil {
				h = pubsub.Shared(c)
			}
			if _, err := l.TrySetCount(ctx, 1); err != nil {
				t.Fatal(err)
			}
			done := goWait(ctx, l)
			waiters(t, h, 1)
			blocked(t, done, "count 1") // and past its attempt after subscribing
			start := time.Now()
			if err := tc.clear(ctx, c, l); err != nil {
				t.Fatal(err)
			}
			released(t, done, wait.Backstop+2*time.Second, "message lost")
			d := time.Since(start)
			t.Logf("released %v after the unheard change (backstop %v)", d, wait.Backstop)
			if d < time.Second {
				t.Errorf("released after %v: the change was heard, so this tests no lost message", d)
			}
		})
	}
}

func TestLatch_Wait_hubClosed(t *testing.T) {
	noLeaks(t)
	c, _ := mini(t)
	h := pubsub.New(c)
	l := countdownlatch.New(c, latchName(t), countdownlatch.WithHub(h))
	ctx := context.Background()
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := goWait(ctx, l)
	waiters(t, h, 1)
	_ = h.Close()
	select {
	case err := <-done:
		if !errors.Is(err, latchkey.ErrClosed) {
			t.Fatalf("Wait on a closed Hub = %v, want ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Wait still blocked after its Hub closed")
	}
}
