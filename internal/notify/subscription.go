package notify

import (
	"sync"
	"time"
)

// A Subscription is one waiter's registration on a channel of a Hub.
type Subscription struct {
	hub  *Hub
	ch   *channel
	need int // units of a counted wake-up this waiter needs (see SubscribeNeed)
	// handOn: the pending wake-up was meant for a limited number of waiters
	// (not every one), so a waiter leaving without it passes it on.
	handOn bool
	c      chan struct{}
	once   sync.Once

	key    string    // the letters this waiter takes (see Hub.SubscribeKey)
	mail   string    // the body of the latest letter not yet read
	mailAt time.Time // when it arrived
	posted bool      // mail holds an unread letter

	count  int // messages counted since the last Count (see Hub.SubscribeCounter)
	expect int // how many wake the waiter
}

// Expect makes a counter wake its waiter once n messages have been counted
// since the last Count (at once if they have).
func (s *Subscription) Expect(n int) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.expect = max(n, 1)
	if s.count >= s.expect {
		s.signal()
	}
}

// Count returns how many messages a counter counted since the last Count.
func (s *Subscription) Count() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	n := s.count
	s.count = 0
	return n
}

// Letter returns the latest letter for the waiter's key that it has not
// read yet, and when the Hub received it.
func (s *Subscription) Letter() (body string, at time.Time, ok bool) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	body, at, ok = s.mail, s.mailAt, s.posted
	s.mail, s.mailAt, s.posted = "", time.Time{}, false
	return body, at, ok
}

// post leaves a letter for the waiter and wakes it. The caller holds the
// Hub's mutex.
func (s *Subscription) post(body string, at time.Time) {
	s.mail, s.mailAt, s.posted = body, at, true
	if s.signal() {
		s.handOn = false // for this waiter only: a letter is not passed on
	}
}

// C returns the channel on which wake-ups arrive. Wake-ups coalesce: a
// waiter that has not yet consumed one is not sent another.
func (s *Subscription) C() <-chan struct{} { return s.c }

// Done returns a channel that is closed when the Hub is closed.
func (s *Subscription) Done() <-chan struct{} { return s.hub.done }

// Close unregisters the waiter; the last waiter on a channel unsubscribes
// it, after the Hub's linger time. A wake-up meant for a limited number of
// waiters (not a wake-all) that the waiter received but did not consume is
// passed on to another waiter. Close is idempotent.
func (s *Subscription) Close() {
	s.once.Do(func() {
		h := s.hub
		h.mu.Lock()
		defer h.mu.Unlock()
		ch := s.ch
		for i, o := range ch.subs {
			if o == s {
				ch.subs = append(ch.subs[:i:i], ch.subs[i+1:]...)
				break
			}
		}
		if h.chans[ch.name] != ch {
			return // the Hub was closed
		}
		select {
		case <-s.c:
			if s.handOn {
				h.wakeLocked(ch, s.need)
			}
		default:
		}
		// A channel whose SUBSCRIBE never reached the server awaits no reply.
		if len(ch.subs) == 0 && (!ch.pending || ch.sendFail) {
			h.leftLocked(ch)
		}
	})
}

func (s *Subscription) signal() bool {
	select {
	case s.c <- struct{}{}:
		return true
	default:
		return false
	}
}
