package lease

import (
	"errors"
	"time"
)

// ErrForgotten is the cause of a hold found gone by a Recheck: its server
// was reached again after the connection to it broke, and no longer has
// it, as after a restart without persistence or a failover to a replica
// that never got it.
var ErrForgotten = errors.New("found gone when its server was reached again after a broken connection (a restart or a failover that lost it)")

// A Watcher watches the servers of the holds a Scheduler renews, and calls
// the Scheduler's Recheck when its connection to one of them was
// re-established, so that a hold the server forgot is found out at once
// rather than at its next renewal. Watch and Unwatch are called once per
// hold, with the hold's first key, without the Scheduler's lock held; they
// must not block.
type Watcher interface {
	Watch(key string)
	Unwatch(key string)
}

// SetWatcher makes w watch the servers of the holds added from now on.
func (s *Scheduler) SetWatcher(w Watcher) {
	s.mu.Lock()
	s.watcher = w
	s.mu.Unlock()
}

// unwatch tells the watcher, if any, that h is no longer renewed.
func (s *Scheduler) unwatch(h *Hold) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w != nil {
		w.Unwatch(h.Keys[0])
	}
}

// Recheck renews every hold now, in one batched pass, as if each were
// due: a hold that its server forgot is declared lost, with ErrForgotten
// in its cause, and the others are renewed early, which disturbs nothing.
func (s *Scheduler) Recheck() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	for h := range s.armed {
		s.promote(h)
	}
	for h := range s.holds {
		h.next, h.recheck = now, true
	}
	s.wakeUnlock() // with no holds, the goroutine exits at once
}
