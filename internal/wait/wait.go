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
	// Hub carries the wake-ups. It may be nil: the loop then sleeps only
	// for the attempts' retry bounds (RedLock, whose waiters have no single
	// server to listen to).
	Hub     *pubsub.Hub
	Channel string
	Policy  pubsub.WakePolicy
	// Need, if above 1, is how many units of a counted wake-up (see
	// pubsub.WakeCount) this waiter needs: a waiter for Need permits is
	// woken when Need may be available (see pubsub.Hub.SubscribeNeed).
	Need    int
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
	var wake, hubDone <-chan struct{} // nil without a Hub: never ready
	if wait != 0 && s.Hub != nil && s.Hub.Subscribed(s.Channel) {
		// Joining a channel the Hub already listens on costs no round trip:
		// join before the first attempt, and that attempt is the only one
		// needed before sleeping (a hot lock's waiters take this path).
		if sub, err := s.Hub.SubscribeNeed(ctx, s.Channel, s.Policy, s.Need); err == nil {
			defer sub.Close()
			wake, hubDone = sub.C(), sub.Done()
		}
	}
	ok, retry, err := attempt(ctx, s)
	if ok || err != nil || wait == 0 {
		return ok, err
	}

	if s.Hub != nil && wake == nil {
		subCtx := ctx
		if wait > 0 {
			var cancel context.CancelFunc
			subCtx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		sub, err := s.Hub.SubscribeNeed(subCtx, s.Channel, s.Policy, s.Need)
		if err == nil {
			defer sub.Close() // also when ctx ended just as it returned
		}
		switch {
		case ctx.Err() != nil:
			return false, ctx.Err()
		case err != nil && subCtx.Err() != nil:
			return false, nil // the budget ran out while subscribing
		case err != nil:
			return false, err
		}
		wake, hubDone = sub.C(), sub.Done()
		// A release between the first attempt and the subscription was
		// not heard: look again before sleeping.
		if ok, retry, err = attempt(ctx, s); ok || err != nil {
			return ok, err
		}
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		sleep := nap(retry)
		if wait > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			sleep = min(sleep, left)
		}
		timer.Reset(sleep) // since Go 1.23 Reset never leaves a stale tick behind
		select {
		case <-wake:
		case <-timer.C:
		case <-hubDone:
			return false, lockerr.ErrClosed
		case <-ctx.Done():
			return false, ctx.Err()
		}
		if ok, retry, err = attempt(ctx, s); ok || err != nil {
			return ok, err
		}
	}
}

// nap returns how long to sleep, without a wake-up, after an attempt that
// answered retry: that bound, or Backstop when it has none or a longer one.
func nap(retry time.Duration) time.Duration {
	if retry < 0 || retry > Backstop {
		return Backstop
	}
	return retry
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
