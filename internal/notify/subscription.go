package notify

import (
	"sync"
	"time"
)

// A Subscription is one waiter's registration on a channel of a Hub.
type Subscription struct {
	hub  *Hub
	ch   *channel
	need int // units of a counted wake-up this waiter needs (see Want.Need)
	// handOn: the pending wake-up was meant for a limited number of waiters
	// (not every one), so a waiter leaving without it passes it on.
	handOn bool
	c      chan struct{}
	once   sync.Once

	key    string    // the letters this waiter takes (see Want.Key)
	mail   string    // the body of the latest letter not yet read
	mailAt time.Time // when it arrived
	posted bool      // mail holds an unread letter

	count  int // messages counted since the last Count (see Want.Counter)
	expect int // how many wake the waiter

	tap    bool     // hears every message, waking no waiter (see Hub.Tap)
	heard  []string // a tap's messages not read yet (see Heard)
	missed bool     // messages may have been missed since the last Heard
}

// maxHeard bounds the messages a tap keeps unread; past it, Heard says
// that some were missed.
const maxHeard = 32

// Heard returns the messages a tap heard since the last Heard, oldest
// first, and whether some may have been missed: after a reconnect, or
// when more came than it keeps.
func (s *Subscription) Heard() (payloads []string, missed bool) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	payloads, missed = s.heard, s.missed
	s.heard, s.missed = nil, false
	return payloads, missed
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
		if s.tap {
			ch.taps = without(ch.taps, s)
		} else {
			ch.subs = without(ch.subs, s)
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
		if ch.idle() && (!ch.pending || ch.sendFail) {
			h.leftLocked(ch)
		}
	})
}

// without returns subs without s.
func without(subs []*Subscription, s *Subscription) []*Subscription {
	for i, o := range subs {
		if o == s {
			return append(subs[:i:i], subs[i+1:]...)
		}
	}
	return subs
}

func (s *Subscription) signal() bool {
	select {
	case s.c <- struct{}{}:
		return true
	default:
		return false
	}
}
