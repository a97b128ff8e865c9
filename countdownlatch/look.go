package countdownlatch

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The waiters of one latch on one client share their looks at the count:
// the zero message wakes every waiter of the client at once, and one GET
// then answers them all, rather than one GET per waiter.

// A look is one GET of the count, answered to every waiter that joined it.
type look struct {
	start time.Time // when it was sent, at the earliest
	done  chan struct{}
	n     int64
	err   error
}

// answers reports whether l's answer, once done, is one that a waiter may
// act on: any answer of a look sent after the waiter's attempt began, and
// a zero of one sent after its wait began (the latch opened during the
// wait). An older look's nonzero count may predate the message that woke
// the waiter, which it would then sleep through.
func (l *look) answers(attempt, began time.Time) bool {
	return l.err == nil && (!l.start.Before(attempt) || l.n == 0 && !l.start.Before(began))
}

// looks is the shared state of the waiters of one latch on one client.
type looks struct {
	key   lookKey
	users int // waiters, under lookers' lock

	mu   sync.Mutex
	cur  *look // in flight, or nil
	last *look // the latest done, for waiters woken after it was sent
}

type lookKey struct {
	client redis.UniversalClient
	name   string
}

var lookers struct {
	sync.Mutex
	m map[lookKey]*looks
}

// joinLooks returns the shared looks of the latch called name on c; the
// caller calls leave when its wait ends.
func joinLooks(c redis.UniversalClient, name string) *looks {
	k := lookKey{c, name}
	lookers.Lock()
	defer lookers.Unlock()
	s := lookers.m[k]
	if s == nil {
		if lookers.m == nil {
			lookers.m = make(map[lookKey]*looks)
		}
		s = &looks{key: k}
		lookers.m[k] = s
	}
	s.users++
	return s
}

func (s *looks) leave() {
	lookers.Lock()
	defer lookers.Unlock()
	if s.users--; s.users == 0 {
		delete(lookers.m, s.key)
	}
}

// count returns the latch's count as fetch reads it, for a waiter whose
// attempt began at attempt and whose wait began at began: from a look in
// flight or just done if its answer will do (see look.answers), else from
// a look of its own, which the waiters that come meanwhile join. An error is the
// caller's own look's: a shared look that failed is tried again.
func (s *looks) count(ctx context.Context, attempt, began time.Time, fetch func(context.Context) (int64, error)) (int64, error) {
	for {
		s.mu.Lock()
		if l := s.last; l != nil && l.answers(attempt, began) {
			s.mu.Unlock()
			return l.n, nil
		}
		l := s.cur
		if l == nil {
			l = &look{start: time.Now(), done: make(chan struct{})}
			s.cur = l
			s.mu.Unlock()
			l.n, l.err = fetch(ctx)
			s.mu.Lock()
			s.cur, s.last = nil, l
			s.mu.Unlock()
			close(l.done)
			return l.n, l.err
		}
		s.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if l.answers(attempt, began) {
			return l.n, nil
		}
	}
}
