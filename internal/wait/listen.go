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
	mail             *notify.Subscription // takes s.Key's letters
	counter          *notify.Subscription // counts s.Hint's messages
}

// expect tells the hint counter, if any, how many messages to wake at.
func (l *listener) expect(s Spec) {
	if l.counter != nil {
		l.counter.Expect(s.Expect())
	}
}

// recount returns how many hint messages arrived since it was last called.
func (l *listener) recount() int {
	if l.counter == nil {
		return 0
	}
	return l.counter.Count()
}

// read passes the letter that woke the waiter, if any (got), to s.Letter.
func (l *listener) read(s Spec) (done bool, within time.Duration, got bool) {
	if l.mail == nil {
		return false, 0, false
	}
	body, at, ok := l.mail.Letter()
	if !ok {
		return false, 0, false
	}
	done, within = s.Letter(body, at)
	return done, within, true
}

// join subscribes to s's channels that l lacks. With live set it joins only
// those the Hub already listens on, which needs no I/O and cannot fail.
func (l *listener) join(ctx context.Context, s Spec, live bool) error {
	if s.Hub == nil {
		return nil
	}
	add := func(name string, p notify.WakePolicy, need int, key string) (<-chan struct{}, error) {
		if live && !s.Hub.Subscribed(name) {
			return nil, nil
		}
		var sub *notify.Subscription
		var err error
		switch {
		case p == nil && s.HintPolicy != nil:
			sub, err = s.Hub.SubscribeCounterNeed(ctx, name, s.HintPolicy, s.HintNeed)
			l.counter = sub
		case p == nil:
			sub, err = s.Hub.SubscribeCounter(ctx, name)
			l.counter = sub
		case key != "":
			sub, err = s.Hub.SubscribeKey(ctx, name, p, key)
			l.mail = sub
		default:
			sub, err = s.Hub.SubscribeNeed(ctx, name, p, need)
		}
		if err != nil {
			return nil, err
		}
		l.subs = append(l.subs, sub)
		l.done = sub.Done()
		return sub.C(), nil
	}
	var err error
	if l.wake == nil {
		if l.wake, err = add(s.Channel, s.Policy, s.Need, s.Key); err != nil && !live {
			return err
		}
	}
	if s.Hint != "" && l.hint == nil && hinted(s) {
		if l.hint, err = add(s.Hint, nil, 1, ""); err != nil && !live {
			return err
		}
	}
	return nil
}

// complete reports whether l listens on every channel s needs now.
func (l *listener) complete(s Spec) bool {
	return l.wake != nil && (s.Hint == "" || l.hint != nil || !hinted(s))
}

// hinted reports whether s needs its hint channel now.
func hinted(s Spec) bool { return s.Hinted == nil || s.Hinted() }

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
