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
	Hub     *notify.Hub
	Channel string
	Policy  notify.WakePolicy
	// Need, if above 1, is how many units of a counted wake-up (see
	// notify.WakeCount) this waiter needs: a waiter for Need permits is
	// woken when Need may be available (see notify.Hub.SubscribeNeed).
	Need int
	// Hint, if set, is a second channel whose messages are hints: a wake-up
	// from it leads to an attempt only when Heard, called once per wake-up,
	// says so (a queued mutex waiter counting releases on Redisson's shared
	// channel until its turn may have come). Otherwise, a positive within
	// brings the next attempt forward to at most that far away.
	Hint       string
	HintPolicy notify.WakePolicy
	Heard      func() (now bool, within time.Duration)
	Attempt    Attempt
	// Transient, if set, replaces fault.Transient in telling which errors
	// of Attempt to ride out (see Outage). RedLock sets it: a node down is
	// what its quorum is for, and no quorum is an answer, not an outage.
	Transient func(error) bool
	// Abandon, if set, undoes what unsuccessful attempts left behind (a
	// fair-lock queue entry, a grant whose reply was lost). It runs whenever
	// Until returns without success, with a context that is not cancelled.
	Abandon func(ctx context.Context)
}

// AbandonTimeout bounds the clean-up that runs after giving up.
const AbandonTimeout = 5 * time.Second

// Outage is the longest a waiting call rides out errors that a retry may
// cure (see fault.Transient): a connection refused or reset, a timeout, a
// failover in progress. Such an error is retried, backing off from 25ms to
// 1s, while ctx and the wait budget allow; only a fault that lasts longer
// than Outage, or one that is not transient, ends the wait with its error.
// A Redis Cluster failover takes the node timeout and an election: about 3s
// with a 2s cluster-node-timeout, 20s with the default 15s.
const Outage = 30 * time.Second

func (s Spec) transient(err error) bool {
	if s.Transient != nil {
		return s.Transient(err)
	}
	return fault.Transient(err)
}

// Until runs s until an attempt succeeds, ctx ends, or the budget wait runs
// out. A negative wait means no budget; zero means a single attempt.
// Running out of budget returns (false, nil), even during an outage (see
// Outage), unless no attempt of the wait had an answer: then it returns the
// outage's error, since the lock was never even seen. An ended ctx returns
// an error matching ctx.Err(); a closed Hub returns an error matching
// ErrClosed.
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
	f := faults{deadline: deadline}
	ok, retry, err := f.attempt(ctx, s)
	if ok || err != nil {
		return ok, f.final(err)
	}

	for s.Hub != nil && !l.complete(s) {
		subCtx := ctx
		var cancel context.CancelFunc = func() {}
		if wait > 0 {
			subCtx, cancel = context.WithDeadline(ctx, deadline)
		}
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
		// A release between the first attempt and the subscription was
		// not heard: look again before sleeping.
		if ok, retry, err = f.attempt(ctx, s); ok || err != nil {
			return ok, f.final(err)
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
		wakeAt := time.Now().Add(sleep)
	sleeping:
		for {
			select {
			case <-l.wake:
				break sleeping
			case <-l.hint:
				now, within := s.Heard()
				if now {
					break sleeping
				}
				if within > 0 && time.Now().Add(within).Before(wakeAt) {
					wakeAt = time.Now().Add(within)
					timer.Reset(within)
				}
			case <-timer.C:
				break sleeping
			case <-l.done:
				return false, lockerr.ErrClosed
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		if ok, retry, err = f.attempt(ctx, s); ok || err != nil {
			return ok, f.final(err)
		}
	}
}

// faults tracks the outage a waiting call is riding out, if any.
type faults struct {
	deadline time.Time // of the wait budget; zero for none
	since    time.Time // first error of the current outage; zero for none
	tries    int       // errors in a row
	answered bool      // an attempt got an answer: Redis was there
}

// errSpent ends a wait whose budget ran out during an outage after an
// attempt had an answer: the wait ran out, as it would have without the
// fault, and the outage is no news to report.
var errSpent = errors.New("wait: budget spent")

// final is the error a wait ends with after err: none when the budget ran
// out during an outage after an attempt had an answer.
func (f *faults) final(err error) error {
	if errors.Is(err, errSpent) {
		return nil
	}
	return err
}

// attempt runs s.Attempt, retrying through transient errors (see Outage).
func (f *faults) attempt(ctx context.Context, s Spec) (bool, time.Duration, error) {
	for {
		ok, retry, err := attempt(ctx, s)
		if err == nil || !s.transient(err) {
			f.since, f.tries = time.Time{}, 0
			f.answered = f.answered || err == nil
			return ok, retry, err
		}
		if err := f.pause(ctx, err); err != nil {
			return false, 0, err
		}
	}
}

// pause sleeps before the retry that follows err, a transient error, and
// returns nil; or it returns err, or ctx.Err(), when the outage has lasted
// Outage, the budget runs out first (errSpent if an attempt had an answer),
// or ctx ends.
func (f *faults) pause(ctx context.Context, err error) error {
	now := time.Now()
	if f.since.IsZero() {
		f.since = now
	}
	f.tries++
	d := min(25*time.Millisecond<<min(f.tries-1, 6), time.Second)
	if now.Add(d).After(f.since.Add(Outage)) {
		return err
	}
	if !f.deadline.IsZero() && now.Add(d).After(f.deadline) {
		if f.answered {
			return errSpent
		}
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listener holds a waiter's subscriptions. Its channels are nil, and never
// ready, until subscribed.
type listener struct {
	wake, hint, done <-chan struct{}
	subs             []*notify.Subscription
}

// join subscribes to s's channels that l lacks. With live set it joins only
// those the Hub already listens on, which needs no I/O and cannot fail.
func (l *listener) join(ctx context.Context, s Spec, live bool) error {
	if s.Hub == nil {
		return nil
	}
	add := func(name string, p notify.WakePolicy, need int) (<-chan struct{}, error) {
		if live && !s.Hub.Subscribed(name) {
			return nil, nil
		}
		sub, err := s.Hub.SubscribeNeed(ctx, name, p, need)
		if err != nil {
			return nil, err
		}
		l.subs = append(l.subs, sub)
		l.done = sub.Done()
		return sub.C(), nil
	}
	var err error
	if l.wake == nil {
		if l.wake, err = add(s.Channel, s.Policy, s.Need); err != nil && !live {
			return err
		}
	}
	if s.Hint != "" && l.hint == nil {
		if l.hint, err = add(s.Hint, s.HintPolicy, 1); err != nil && !live {
			return err
		}
	}
	return nil
}

// complete reports whether l listens on every channel of s.
func (l *listener) complete(s Spec) bool {
	return l.wake != nil && (s.Hint == "" || l.hint != nil)
}

func (l *listener) close() {
	for _, sub := range l.subs {
		sub.Close()
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

// Retry calls f until it returns nil or an error that is not transient,
// riding out transient ones as a waiting call does (see Outage), within
// ctx. It is for requests that are safe to send again because they carry a
// request record (see scripts.Write.Once): releases, count-downs, changes of
// permits. It returns f's last error, or an error matching ctx.Err().
func Retry(ctx context.Context, f func(ctx context.Context) error) error {
	var fs faults
	for {
		err := f(ctx)
		if err == nil || !fault.Transient(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fs.pause(ctx, err); err != nil {
			return err
		}
	}
}
