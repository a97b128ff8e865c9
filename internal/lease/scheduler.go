package lease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/redis/go-redis/v9"
)

// A Scheduler renews the holds of one client. Its goroutine runs only while
// it has holds.
type Scheduler struct {
	client redis.UniversalClient
	send   Send

	mu sync.Mutex
	// armed holds wait on their own runtime timer for their first renewal,
	// so that a lock released before then (most are) never wakes the
	// scheduler's goroutine; holds are those the goroutine renews.
	armed   map[*Hold]*time.Timer
	holds   map[*Hold]struct{}
	running bool
	closed  bool
	kick    chan struct{}
	watcher Watcher // see SetWatcher
}

// A Send runs the renewal script called script with keys and args,
// waiting up to sync for replicas, and returns its answers: the runtime's
// send path.
type Send func(ctx context.Context, script string, keys []string, args []any, sync time.Duration) ([]int64, error)

// New returns the scheduler of client's holds, which sends its renewals
// with send. It does no I/O, and starts no goroutine until a hold is due
// for renewal.
func New(client redis.UniversalClient, send Send) *Scheduler {
	return &Scheduler{
		client: client,
		send:   send,
		armed:  make(map[*Hold]*time.Timer),
		holds:  make(map[*Hold]struct{}),
		kick:   make(chan struct{}, 1),
	}
}

// Close stops renewing every hold; each is declared lost with ErrClosed,
// since nothing keeps it alive any more. Holds added later are declared
// lost at once.
func (s *Scheduler) Close() {
	s.mu.Lock()
	s.closed = true
	holds := s.holds
	for h, t := range s.armed {
		t.Stop()
		holds[h] = struct{}{}
	}
	for h := range holds {
		if h.expiry != nil {
			h.expiry.Stop()
		}
	}
	s.holds, s.armed = map[*Hold]struct{}{}, map[*Hold]*time.Timer{}
	s.mu.Unlock()
	s.poke()
	for h := range holds {
		s.unwatch(h)
		h.Lost(fmt.Errorf("%w: watchdog closed: %w", lockerr.ErrLost, lockerr.ErrClosed))
	}
}

// Add starts renewing h, acquired at the given time with lease h.Lease.
func (s *Scheduler) Add(h *Hold, acquired time.Time) {
	h.valid = acquired.Add(h.Lease)
	h.next = acquired.Add(h.Lease / 3)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		// Not from the caller's goroutine: it may hold the lock that Lost
		// takes (a primitive adds its hold under its own mutex).
		go h.Lost(fmt.Errorf("%w: watchdog closed: %w", lockerr.ErrLost, lockerr.ErrClosed))
		return
	}
	s.armed[h] = time.AfterFunc(time.Until(h.next), func() { s.activate(h) })
	w := s.watcher
	s.mu.Unlock()
	if w != nil {
		w.Watch(h.Keys[0])
	}
}

// Valid returns the end of h's known validity: its latest confirmed
// renewal, or its acquisition, plus the lease, less the drift allowance.
func (s *Scheduler) Valid(h *Hold) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return h.deadline()
}

// expire declares h lost at its deadline, unless it ended meanwhile: its
// key may expire on the server any time now, so its holder must stop
// relying on it, whatever renewal is still on its way. A hold found gone
// on the server is told again (see Hold.Lost).
func (s *Scheduler) expire(h *Hold) {
	s.mu.Lock()
	_, live := s.holds[h]
	if !live && !h.found {
		s.mu.Unlock()
		return
	}
	h.found = false
	delete(s.holds, h)
	err := h.lastErr
	s.mu.Unlock()
	if live { // a hold found gone was unwatched then
		s.unwatch(h)
	}
	if err != nil {
		h.Lost(fmt.Errorf("%w: %w: %w", lostErr, ErrExpired, err))
	} else {
		h.Lost(fmt.Errorf("%w: %w", lostErr, ErrExpired))
	}
}

// activate hands an armed hold, due for its first renewal, to the goroutine.
func (s *Scheduler) activate(h *Hold) {
	s.mu.Lock()
	if _, ok := s.armed[h]; !ok {
		s.mu.Unlock()
		return // removed or closed meanwhile
	}
	s.promote(h)
	s.wakeUnlock()
}

// promote hands an armed hold to the goroutine, with s.mu held, and sets
// its expiry: an armed hold needs none, its first renewal being due well
// before its deadline (a third of its lease against all of it, less the
// Drift), so that a lock released before then costs one timer, not two.
func (s *Scheduler) promote(h *Hold) {
	s.armed[h].Stop()
	delete(s.armed, h)
	s.holds[h] = struct{}{}
	h.expiry = time.AfterFunc(time.Until(h.deadline()), func() { s.expire(h) })
}

// wakeUnlock unlocks s.mu and has the goroutine look at the holds: it is
// started if not running, poked otherwise.
func (s *Scheduler) wakeUnlock() {
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		go s.run()
	} else {
		s.poke()
	}
}

// Remove stops renewing h. It reports whether h was still being renewed
// (false once it was declared lost).
func (s *Scheduler) Remove(h *Hold) bool {
	s.mu.Lock()
	if h.expiry != nil {
		h.expiry.Stop()
	}
	h.found = false // an expiry already firing tells nothing
	if t, ok := s.armed[h]; ok {
		t.Stop()
		delete(s.armed, h)
		s.mu.Unlock()
		s.unwatch(h)
		return true
	}
	_, ok := s.holds[h]
	delete(s.holds, h)
	empty := len(s.holds) == 0
	s.mu.Unlock()
	if ok {
		s.unwatch(h)
	}
	if ok && empty {
		s.poke() // let the goroutine exit now rather than at its next due time
	}
	return ok
}

// Len returns the number of holds being renewed.
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.holds) + len(s.armed)
}

func (s *Scheduler) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Scheduler) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due, next, ok := s.due(time.Now())
		if !ok {
			return
		}
		if len(due) > 0 {
			s.renew(due)
			continue
		}
		timer.Reset(time.Until(next))
		select {
		case <-timer.C:
		case <-s.kick:
		}
	}
}

// due returns, once a renewal is due, every renewal due within its
// window, armed holds' too, so that neighbours share script calls; a pass
// waits for a renewal that is due, rather than one that is nearly, so that
// passes are a window apart and their batches full. Otherwise it returns
// when the next renewal is due. ok is false, and the goroutine must exit,
// when there are no holds.
func (s *Scheduler) due(now time.Time) (due []*Hold, next time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.holds) == 0 {
		s.running = false
		return nil, time.Time{}, false
	}
	for h := range s.holds {
		if next.IsZero() || h.next.Before(next) {
			next = h.next
		}
	}
	if next.After(now) {
		return nil, next, true
	}
	for h := range s.armed {
		if !h.next.After(now.Add(h.window())) {
			s.promote(h)
		}
	}
	for h := range s.holds {
		if !h.next.After(now.Add(h.window())) {
			due = append(due, h)
		}
	}
	return due, next, true
}
