// Package wait is the one blocking loop behind every Lock, Acquire and Wait
// of latchkey.
//
// An attempt runs a primitive's acquire script. When it fails, the loop
// subscribes to the primitive's channel (and hint channel, if any) through a
// Hub, waits for the server to confirm, and attempts again (so a release
// between the first attempt and the subscription is never missed); channels
// the Hub already listens on are joined before the first attempt instead,
// at no cost. Then it sleeps until a wake-up arrives,
// the attempt's own bound runs out (the holder's TTL, the next permit
// expiry), ctx ends or the wait budget ends, and attempts again. Nobody
// polls on a fixed interval: Backstop only caps a sleep that has no bound or
// a very long one, in case a message is lost.
package wait

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/fault"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/observe"
	"github.com/latchkey/latchkey/internal/settings"
	"github.com/redis/go-redis/v9"
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
	// Client, Kind and Name say where and as what the call's end is
	// reported (see observe.Hooks: Acquired, Abandoned, NotReplicated).
	// Nothing is reported without a Client.
	Client     redis.UniversalClient
	Kind, Name string
	Reentry    bool // the caller re-enters a hold of its own (Event.Reentered)
	// Hub carries the wake-ups. It may be nil: the loop then sleeps only
	// for the attempts' retry bounds (RedLock, whose waiters have no single
	// server to listen to).
	Hub     *notify.Hub
	Channel string
	Policy  notify.WakePolicy
	// Need, if above 1, is how many units of a counted wake-up (see
	// notify.WakeCount) this waiter needs: a waiter for Need permits is
	// woken when Need may be available (see notify.Hub.SubscribeNeed).
	Need int
	// Hint, if set, is a second channel whose messages the waiter counts
	// (see notify.Hub.SubscribeCounter) rather than waking on each: once
	// as many as Expect says have arrived since the latest attempt or
	// Heard, Heard, told how many did, says whether to attempt now, or
	// else brings the next attempt forward to at most within away (if
	// positive). A queued mutex waiter counts releases on Redisson's shared
	// channel until its turn may have come.
	Hint    string
	Expect  func() int
	Heard   func(n int) (now bool, within time.Duration)
	Attempt Attempt
	// HintPolicy, if set, makes the waiter count only the Hint messages
	// that it counts as at least HintNeed (see
	// notify.Hub.SubscribeCounterNeed): a semaphore waiter counts only
	// Redisson's releases that leave enough permits for it.
	HintPolicy notify.WakePolicy
	HintNeed   int
	// Hinted, if set, says whether the waiter needs Hint's messages now;
	// it is asked after each attempt. Otherwise it always does.
	Hinted func() bool
	// Key, if set, makes the waiter take letters to Key on Channel as well
	// (see notify.Hub.SubscribeKey), and Letter reads each: done ends the
	// wait with success and no attempt (a lock granted by its release); a
	// positive within brings the next attempt forward to at most that far
	// away; otherwise the waiter attempts, as for any wake-up.
	Key    string
	Letter func(body string, at time.Time) (done bool, within time.Duration)
	// Transient, if set, replaces fault.Transient in telling which errors
	// of Attempt to ride out (see Retry). RedLock sets it: a node down is
	// what its quorum is for, and no quorum is an answer, not an outage.
	Transient func(error) bool
	// Abandon, if set, undoes what unsuccessful attempts left behind (a
	// fair-lock queue entry, a grant whose reply was lost). It runs whenever
	// Until returns without success, off the caller's path (see Behind).
	Abandon func(ctx context.Context)
}

// Until runs s until an attempt succeeds, ctx ends, or the budget wait runs
// out. A negative wait means no budget; zero means a single attempt, which
// rides out nothing. Running out of budget returns (false, nil), even during
// an outage (see Retry), unless no attempt of the wait had an answer: then
// it returns the outage's error, since the lock was never even seen. An
// ended ctx returns an error matching ctx.Err(); a closed Hub returns an
// error matching ErrClosed.
func Until(ctx context.Context, wait time.Duration, s Spec) (ok bool, err error) {
	if observe.For(s.Client) != nil {
		defer s.report(time.Now(), wait, &s.Attempt)(&ok, &err)
	}
	defer func() {
		if !ok && s.Abandon != nil {
			Behind(ctx, err == nil, s.Abandon)
		}
	}()
	var deadline time.Time
	if wait >= 0 {
		deadline = time.Now().Add(wait)
	}
	var l listener
	defer l.close()
	if wait != 0 {
		// Joining channels the Hub already listens on costs no round trip:
		// join them before the first attempt (a busy lock's waiters find
		// every channel live, and then make one attempt before sleeping).
		l.join(ctx, s, true)
	}
	if wait == 0 {
		ok, _, err := attempt(ctx, s)
		return ok, err
	}
	f := faults{rideOut: settings.RideOut(s.Client), deadline: deadline}
	ok, retry, err := f.attempt(ctx, s)
	if ok || err != nil {
		return ok, f.final(err)
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if s.Hub != nil && !l.complete(s) {
			subCtx := ctx
			var cancel context.CancelFunc = func() {}
			if wait > 0 {
				subCtx, cancel = context.WithDeadline(ctx, deadline)
			}
			f.began(time.Now())
			err := l.join(subCtx, s, false)
			spent := subCtx.Err() != nil
			cancel()
			switch {
			case ctx.Err() != nil:
				return false, ctx.Err()
			case err != nil && spent:
				return false, nil // the budget ran out while subscribing
			case err != nil && fault.Transient(err):
				if err := f.pause(ctx, err); err != nil {
					return false, f.final(err)
				}
				continue
			case err != nil:
				return false, err
			}
			// A release between the latest attempt and the subscription
			// was not heard: look again before sleeping.
			l.recount()
			if ok, retry, err = f.attempt(ctx, s); ok || err != nil {
				return ok, f.final(err)
			}
			continue
		}
		sleep := nap(retry)
		if wait > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			sleep = min(sleep, left)
		}
		timer.Reset(sleep) // since Go 1.23 Reset never leaves a stale tick behind
		wakeAt := time.Now().Add(sleep)
		l.expect(s)
	sleeping:
		for {
			select {
			case <-l.wake:
				done, within, got := l.read(s)
				if done {
					return true, nil
				}
				if !got || within <= 0 {
					break sleeping
				}
				if time.Now().Add(within).Before(wakeAt) {
					wakeAt = time.Now().Add(within)
					timer.Reset(within)
				}
			case <-l.hint:
				now, within := s.Heard(l.recount())
				if now {
					break sleeping
				}
				if within > 0 && time.Now().Add(within).Before(wakeAt) {
					wakeAt = time.Now().Add(within)
					timer.Reset(within)
				}
				l.expect(s)
			case <-timer.C:
				break sleeping
			case <-l.done:
				return false, lockerr.ErrClosed
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		if done, _, _ := l.read(s); done {
			return true, nil // whatever woke the waiter, a letter may be there
		}
		l.recount() // the attempt's answer says where the waiter stands
		if ok, retry, err = f.attempt(ctx, s); ok || err != nil {
			return ok, f.final(err)
		}
	}
}

// report counts s's attempts through *attempt, and returns what reports
// the end of the call started at start with budget wait.
func (s Spec) report(start time.Time, wait time.Duration, attempt *Attempt) func(ok *bool, err *error) {
	first, n := false, 0
	inner := *attempt
	*attempt = func(ctx context.Context) (bool, time.Duration, error) {
		ok, retry, err := inner(ctx)
		if n++; n == 1 {
			first = ok
		}
		return ok, retry, err
	}
	return func(ok *bool, err *error) {
		e := observe.Event{Kind: s.Kind, Name: s.Name, Wait: time.Since(start), Waited: !first, Reentered: s.Reentry}
		switch {
		case *ok:
			observe.Report(s.Client, observe.Acquired, e)
		case errors.Is(*err, lockerr.ErrNotReplicated):
			e.Err = *err
			observe.Report(s.Client, observe.NotReplicated, e)
		case wait != 0 && (*err == nil || errors.Is(*err, context.Canceled) || errors.Is(*err, context.DeadlineExceeded)):
			e.Err = *err
			observe.Report(s.Client, observe.Abandoned, e)
		}
	}
}
