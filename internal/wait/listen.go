package wait

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
)

// listener holds a waiter's subscriptions. Its channels are nil, and never
// ready, until subscribed.
type listener struct {
	wake, hint, done <-chan struct{}
	subs             []*notify.Subscription
	mail             *notify.Subscription // takes s.Mail's letters
	counter          *notify.Subscription // counts s.Hint's messages
}

// expect tells the hint counter, if any, how many messages to wake at.
func (l *listener) expect(s Spec) {
	if l.counter != nil {
		l.counter.Expect(s.Hint.Expect())
	}
}

// recount returns how many hint messages arrived since it was last called.
func (l *listener) recount() int {
	if l.counter == nil {
		return 0
	}
	return l.counter.Count()
}

// read passes the letter that woke the waiter, if any (got), to s.Mail.
func (l *listener) read(s Spec) (done bool, within time.Duration, got bool) {
	if l.mail == nil {
		return false, 0, false
	}
	body, at, ok := l.mail.Letter()
	if !ok {
		return false, 0, false
	}
	done, within = s.Mail.Letter(body, at)
	return done, within, true
}

// join subscribes to s's channels that l lacks, in one SUBSCRIBE when it
// lacks both. With live set it joins only those the Hub already listens
// on, which needs no I/O and cannot fail.
func (l *listener) join(ctx context.Context, s Spec, live bool) error {
	if s.Hub == nil {
		return nil
	}
	var buf [2]notify.Want
	wants := buf[:0]
	wake, hint := -1, -1
	if l.wake == nil {
		w := s.Wake
		want := notify.Want{Name: w.Name, Policy: w.Policy, Need: w.Need}
		if s.Mail != nil {
			want = notify.Want{Name: w.Name, Policy: w.Policy, Key: s.Mail.Key()}
		}
		if !live || s.Hub.Subscribed(w.Name) {
			wake, wants = len(wants), append(wants, want)
		}
	}
	if s.Hint != nil && l.hint == nil && s.Hint.Active() {
		h := s.Hint.Channel()
		want := notify.Want{Name: h.Name, Policy: notify.WakeAll, Counter: true}
		if h.Policy != nil {
			want = notify.Want{Name: h.Name, Policy: h.Policy, Need: h.Need, Counter: true}
		}
		if !live || s.Hub.Subscribed(h.Name) {
			hint, wants = len(wants), append(wants, want)
		}
	}
	if len(wants) == 0 {
		return nil
	}
	var subBuf [2]*notify.Subscription
	subs := subBuf[:len(wants)]
	if err := s.Hub.SubscribeAll(ctx, wants, subs); err != nil {
		return err
	}
	l.subs = append(l.subs, subs...)
	l.done = subs[0].Done()
	if wake >= 0 {
		l.wake = subs[wake].C()
		if s.Mail != nil {
			l.mail = subs[wake]
		}
	}
	if hint >= 0 {
		l.hint, l.counter = subs[hint].C(), subs[hint]
	}
	return nil
}

// live is a Call that tells its Mail, before each attempt, whether the
// listener takes its letters yet.
type live struct {
	Call
	l    listener // the wait's own: one allocation for both
	mail Mail
}

func (c *live) Attempt(ctx context.Context) (bool, time.Duration, error) {
	c.mail.Live(c.l.mail != nil)
	return c.Call.Attempt(ctx)
}

// complete reports whether l listens on every channel s needs now.
func (l *listener) complete(s Spec) bool {
	return l.wake != nil && (s.Hint == nil || l.hint != nil || !s.Hint.Active())
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

// attempt runs s's attempt and reports an ended ctx as ctx.Err() itself, so
// that callers can match it with errors.Is whatever go-redis wrapped.
func attempt(ctx context.Context, s Spec) (bool, time.Duration, error) {
	ok, retry, err := s.Call.Attempt(ctx)
	if err != nil {
		if cerr := ended(ctx); cerr != nil {
			return false, 0, cerr
		}
	}
	return ok, retry, err
}

// ended returns ctx.Err(), or context.DeadlineExceeded once ctx's deadline
// has passed although its timer has not fired yet: a read that go-redis
// cut at the deadline (ContextTimeoutEnabled) may fail first.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}
