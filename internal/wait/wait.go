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
// a very long one, in case a message is lost. A client set to poll
// (latchkey.SetPolling) has no messages: its waiters never subscribe, and
// look again on a schedule (see poller) within the same bounds.
package wait

import (
	"context"
	"errors"
	"time"

	"github.com/latchkey/latchkey/internal/flight"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// Backstop is the longest a waiter sleeps between attempts without a
// wake-up. Messages are only lost on a failure (a reconnect wakes everyone),
// so this only bounds how long such a loss can cost.
const Backstop = 5 * time.Second

// An Attempt tries once. When it fails, retry is the longest the waiter may
// sleep before trying again, or negative when only a message can tell.
type Attempt func(ctx context.Context) (ok bool, retry time.Duration, err error)

// A Call is what a blocking call does: its attempts, and the clean-up of
// what unsuccessful attempts left behind when it gives up (a queue entry,
// a grant whose reply was lost). acquire.Machine is one.
type Call interface {
	Attempt(ctx context.Context) (ok bool, retry time.Duration, err error)
	// Abandon runs whenever Until returns without success, off the
	// caller's path (see Behind).
	Abandon(ctx context.Context)
}

// Attempt is a Call with nothing to undo: a latch's look.
func (a Attempt) Attempt(ctx context.Context) (bool, time.Duration, error) { return a(ctx) }

// Abandon does nothing.
func (Attempt) Abandon(context.Context) {}

// A Channel is a channel a waiter listens on, and how its messages wake
// waiters (see notify.WakePolicy); Need, if above 1, is how many units of
// a counted wake-up the waiter needs (see notify.Want.Need).
type Channel struct {
	Name   string
	Policy notify.WakePolicy
	Need   int
}

// Mail takes the letters to one key on the wake channel (see
// notify.Want.Key): a lock or permits granted by their release.
type Mail interface {
	Key() string
	// Letter reads one: done ends the wait with success and no attempt;
	// a positive within brings the next attempt forward to at most that
	// far away; otherwise the waiter attempts, as for any wake-up.
	Letter(body string, at time.Time) (done bool, within time.Duration)
	// Live is told before each attempt whether letters can reach the
	// waiter yet: whether the server confirmed its Hub's subscription.
	// Until it has, an attempt must not join a queue whose releases write
	// letters: a release that counts no receiver takes the waiter for
	// gone and drops it, so it would queue again at the tail.
	Live(bool)
}

// A Hint is a second channel whose messages the waiter counts rather than
// waking on each: a queued mutex waiter counts Redisson's releases on its
// shared channel until its turn may have come.
type Hint interface {
	// Channel is the channel counted. With a Policy, only the messages
	// that it counts as at least Need count (see notify.Want.Counter);
	// without one, every message does.
	Channel() Channel
	// Active says whether the waiter needs the channel now; it is asked
	// after each attempt.
	Active() bool
	// Expect is how many messages to wake at, asked before each sleep;
	// Heard, told how many came since the latest attempt, says whether to
	// attempt now, or else brings the next attempt forward to at most
	// within (if positive).
	Expect() int
	Heard(n int) (now bool, within time.Duration)
}

// Spec describes one blocking call.
type Spec struct {
	// Client and Event say where and as what the call's end is reported
	// (see latchkey.Hooks: Acquired, Abandoned, NotReplicated): Event's
	// Kind, Name and Reentered; the rest is filled in. Nothing is
	// reported without a Client.
	Client redis.UniversalClient
	Event  rt.Event
	// Hub carries the wake-ups. It may be nil: the loop then sleeps only
	// for the attempts' retry bounds (RedLock, whose waiters have no single
	// server to listen to).
	Hub  *notify.Hub
	Wake Channel
	Mail Mail // optional
	Hint Hint // optional
	Call Call
	// Transient, if set, replaces flight.Transient in telling which errors
	// of an attempt to ride out (see Retry). RedLock sets it: a node down
	// is what its quorum is for, and no quorum is an answer, not an outage.
	Transient func(error) bool
	// Rank, if set, tells a polling waiter's place in its queue after its
	// latest attempt (0 at the head; see poller). Without it, or without
	// a queue, the waiter schedules its looks as a head would.
	Rank func() int64
	// Silent keeps the call out of the client's hooks: it acquires nothing
	// (an election's observer).
	Silent bool
}

// polling reports whether s's waiter polls (see latchkey.SetPolling): its
// client must never subscribe.
func (s *Spec) polling() bool { return rt.Polling(s.Client) }

func (s *Spec) rank() int64 {
	if s.Rank == nil {
		return 0
	}
	return s.Rank()
}

// Until runs s until an attempt succeeds, ctx ends, or the budget wait runs
// out. A negative wait means no budget; zero means a single attempt, which
// rides out nothing. Running out of budget returns (false, nil), even during
// an outage (see Retry), unless no attempt of the wait had an answer: then
// it returns the outage's error, since the lock was never even seen. An
// ended ctx returns an error matching ctx.Err(); a closed Hub returns an
// error matching ErrClosed.
func Until(ctx context.Context, wait time.Duration, s Spec) (ok bool, err error) {
	flight.MustContext(ctx)
	if !s.Silent && rt.SinkOf(s.Client) != nil {
		defer s.report(time.Now(), wait)(&ok, &err)
	}
	var poll *poller
	if s.polling() {
		s.Hub, s.Mail, s.Hint, poll = nil, nil, nil, &poller{}
	}
	defer func() {
		if !ok {
			Behind(ctx, err == nil, s.Call.Abandon)
		}
	}()
	var deadline time.Time
	if wait >= 0 {
		deadline = time.Now().Add(wait)
	}
	l := new(listener)
	if s.Mail != nil {
		lv := &live{Call: s.Call, mail: s.Mail}
		s.Call, l = lv, &lv.l
	}
	defer l.close()
	if wait != 0 {
		// Joining channels the Hub already listens on costs no round trip:
		// join them before the first attempt (a busy lock's waiters find
		// every channel live, and then make one attempt before sleeping).
		l.join(ctx, s, true)
	}
	if wait == 0 {
		ok, _, err := attempt(ctx, s)
		return ok, flight.Explain(s.Client, err)
	}
	f := rt.NewOutage(s.Client, deadline)
	ok, retry, err := attemptThrough(ctx, s, f)
	if ok || err != nil {
		return ok, f.Final(err)
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
			f.Began(time.Now())
			err := l.join(subCtx, s, false)
			spent := subCtx.Err() != nil
			cancel()
			switch {
			case ctx.Err() != nil:
				return false, ctx.Err()
			case err != nil && spent:
				return false, nil // the budget ran out while subscribing
			case err != nil && flight.Transient(err):
				if err := f.Pause(ctx, err); err != nil {
					return false, f.Final(err)
				}
				continue
			case err != nil:
				return false, err
			}
			// A release between the latest attempt and the subscription
			// was not heard: look again before sleeping.
			l.recount()
			if ok, retry, err = attemptThrough(ctx, s, f); ok || err != nil {
				return ok, f.Final(err)
			}
			continue
		}
		sleep := nap(retry)
		if poll != nil {
			sleep = min(sleep, poll.next(s.rank()))
		}
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
				now, within := s.Hint.Heard(l.recount())
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
		if ok, retry, err = attemptThrough(ctx, s, f); ok || err != nil {
			return ok, f.Final(err)
		}
	}
}

// report counts s's attempts, and returns what reports the end of the
// call started at start with budget wait.
func (s *Spec) report(start time.Time, wait time.Duration) func(ok *bool, err *error) {
	c := &counted{Call: s.Call}
	s.Call = c
	return func(ok *bool, err *error) {
		e := s.Event
		e.Wait, e.Waited = time.Since(start), !c.first
		switch {
		case *ok:
			rt.Report(s.Client, rt.Acquired, e)
		case errors.Is(*err, lockerr.ErrNotReplicated):
			e.Err = *err
			rt.Report(s.Client, rt.NotReplicated, e)
		case wait != 0 && (*err == nil || errors.Is(*err, context.Canceled) || errors.Is(*err, context.DeadlineExceeded)):
			e.Err = *err
			rt.Report(s.Client, rt.Abandoned, e)
		}
	}
}

// counted is a Call that notes whether its first attempt succeeded.
type counted struct {
	Call
	n     int
	first bool
}

func (c *counted) Attempt(ctx context.Context) (bool, time.Duration, error) {
	ok, retry, err := c.Call.Attempt(ctx)
	if c.n++; c.n == 1 {
		c.first = ok
	}
	return ok, retry, err
}
