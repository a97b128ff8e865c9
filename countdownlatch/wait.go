package countdownlatch

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/wait"
)

// Wait blocks until the count of the latch is zero, or ctx is done. It
// returns nil at once if the latch does not exist, and nil when the latch
// reaches zero or is deleted while it waits. Wait observes the count when it
// wakes: a latch that reaches zero and is given a new count before a waiter
// looks keeps that waiter waiting, as in Redisson. If a wake-up message is
// lost, Wait notices the count within a few seconds. When ctx ends Wait
// returns an error matching ctx.Err(); when the Hub is closed, one matching
// latchkey.ErrClosed. Waiting changes nothing in Redis.
func (l *Latch) Wait(ctx context.Context) error {
	_, err := l.wait(ctx, -1)
	return err
}

// TryWait is like Wait with a budget: it returns true if the count of the
// latch is zero within wait, and false with a nil error if the wait runs
// out first. A wait of zero or less looks once.
func (l *Latch) TryWait(ctx context.Context, wait time.Duration) (bool, error) {
	return l.wait(ctx, max(wait, 0))
}

func (l *Latch) wait(ctx context.Context, budget time.Duration) (bool, error) {
	if err := rt.Usable(ctx, l.name, l.client); err != nil {
		return false, fmt.Errorf("countdownlatch: wait for %s: %w", l.name, err)
	}
	looks := joinLooks(l.client, l.name)
	defer looks.leave()
	began := time.Now()
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Client: l.client,
		Event:  rt.Event{Kind: "countdownlatch", Name: l.name},
		Hub:    l.cfg.HubFor(l.client),
		// Every message wakes every waiter: ZERO_COUNT opens the latch, and
		// so does a Redisson client's delete, which publishes NEW_COUNT.
		Wake: wait.Channel{Name: l.channel, Policy: notify.WakeAll},
		Call: wait.Attempt(func(ctx context.Context) (bool, time.Duration, error) {
			n, err := looks.count(ctx, time.Now(), began, l.count)
			if err != nil {
				return false, 0, err
			}
			// Only a message says when the count changes: a negative
			// retry lets the wait loop's backstop bound a lost one.
			return n == 0, -1, nil
		}),
	})
	if err != nil {
		return false, fmt.Errorf("countdownlatch: wait for %s: %w", l.name, err)
	}
	return ok, nil
}
