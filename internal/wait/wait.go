// Package wait is the one blocking loop behind every Lock, Acquire and Wait
// of latchkey.
//
// An attempt runs a primitive's acquire script. When it fails, the loop
// subscribes to the primitive's channel through a Hub, waits for the server
// to confirm, and attempts again (so a release between the first attempt and
// the subscription is never missed). Then it sleeps until a wake-up arrives,
// the attempt's own bound runs out (the holder's TTL, the next permit
// expiry), ctx ends or the wait budget ends, and attempts again. Nobody
// polls on a fixed interval: Backstop only caps a sleep that has no bound or
// a very long one, in case a message is lost.
package wait

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/pubsub"
)

// Backstop is the longest a waiter sleeps between attempts without a
// wake-up. Messages are only lost on a failure (a reconnect wakes everyone),
// so this only bounds how long such a loss can cost.
const Backstop = 5 * time.Second

// An Attempt tries once. When it fails, retry is the longest the waiter may
// sleep before trying again, or negative when only a message can tell.
type Attempt func(ctx context.Context) (ok bool, retry time.Duration, err error)

// Spec describes one blocking call.
type Spec struct {
	Hub     *pubsub.Hub
	Channel string
	Policy  pubsub.WakePolicy
	Attempt Attempt
	// Abandon, if set, undoes what unsuccessful attempts left behind (a
	// fair-lock queue entry, a grant whose reply was lost). It runs whenever
	// Until returns without success, with a context that is not cancelled.
	Abandon func(ctx context.Context)
}

// AbandonTimeout bounds the clean-up that runs after giving up.
const AbandonTimeout = 5 * time.Second

// Until runs s until an attempt succeeds, ctx ends, or the budget wait runs
// out. A negative wait means no budget; zero means a single attempt.
// Running out of budget returns (false, nil); an ended ctx returns an error
// matching ctx.Err(); a closed Hub returns an error matching ErrClosed.
func Until(ctx context.Context, wait time.Duration, s Spec) (ok bool, err error) {
	defer func() {
		if !ok && s.Abandon != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AbandonTimeout)
			s.Abandon(actx)
			cancel()
		}
	}()
	var deadline time.Time
	if wait >= 0 {
		deadline = time.Now().Add(wait)
	}
	ok, retry, err := attempt(ctx, s)
	if ok || err != nil || wait == 0 {
		return ok, err
	}

	subCtx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		subCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	sub, err := s.Hub.Subscribe(subCtx, s.Channel, s.Policy)
	switch {
	case ctx.Err() != nil:
		return false, ctx.Err()
	case err != nil && subCtx.Err() != nil:
		return false, nil // the budget ran out while subscribing
	case err != nil:
		return false, err
	}
	defer sub.Close()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if ok, retry, err = attempt(ctx, s); ok || err != nil {
			return ok, err
		}
		sleep := retry
		if sleep < 0 || sleep > Backstop {
			sleep = Backstop
		}
		if wait > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			sleep = min(sleep, left)
		}
		timer.Reset(sleep) // since Go 1.23 Reset never leaves a stale tick behind
		select {
		case <-sub.C():
		case <-timer.C:
		case <-sub.Done():
			return false, lockerr.ErrClosed
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// attempt runs s.Attempt and reports an ended ctx as ctx.Err() itself, so
// that callers can match it with errors.Is whatever go-redis wrapped.
func attempt(ctx context.Context, s Spec) (bool, time.Duration, error) {
	ok, retry, err := s.Attempt(ctx)
	if err != nil && ctx.Err() != nil {
		return false, 0, ctx.Err()
	}
	return ok, retry, err
}
