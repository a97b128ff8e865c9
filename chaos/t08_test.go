package chaos

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// lostReplyTrials is how often each lost-reply case runs, on fresh names.
const lostReplyTrials = 3

// A lostReply is one case of T08: a call whose first reply is lost after
// the server applied it, so that go-redis sends it again.
type lostReply struct {
	// c goes through p, whose next reply is lost during lose; other is a
	// client of its own, never faulted.
	c, other *redis.Client
	p        *Proxy
	name     string
}

// lose runs call with the next reply to c lost, and returns its error.
func (e lostReply) lose(call func(ctx context.Context) error) error {
	heal := e.p.LoseReplies(1)
	defer heal()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return call(ctx)
}

var lostReplyCases = []struct {
	name string
	// run sets up, loses one reply, and returns what went wrong, if
	// anything.
	run func(e lostReply) string
}{
	{"mutex/reentrant-unlock", func(e lostReply) string {
		m := mutex.New(e.c, e.name, mutex.WithWatchdogTimeout(5*time.Second))
		return reentrantUnlock(e, m, m.Lock, m.Unlock, m.HoldCount, mutex.New(e.other, e.name).TryLock)
	}},
	{"fairlock/reentrant-unlock", func(e lostReply) string {
		m := fairlock.New(e.c, e.name, fairlock.WithWatchdogTimeout(5*time.Second))
		return reentrantUnlock(e, m, m.Lock, m.Unlock, m.HoldCount, fairlock.New(e.other, e.name).TryLock)
	}},
	{"rwlock/reentrant-read-unlock", func(e lostReply) string {
		rw := rwlock.New(e.c, e.name, rwlock.WithWatchdogTimeout(5*time.Second))
		return reentrantUnlock(e, rw.ReadLock(), rw.RLock, rw.RUnlock, nil, rwlock.New(e.other, e.name).TryLock)
	}},
	{"rwlock/reentrant-write-unlock", func(e lostReply) string {
		rw := rwlock.New(e.c, e.name, rwlock.WithWatchdogTimeout(5*time.Second))
		return reentrantUnlock(e, rw.WriteLock(), rw.Lock, rw.Unlock, nil, rwlock.New(e.other, e.name).TryRLock)
	}},
	{"mutex/plain-unlock", func(e lostReply) string {
		m := mutex.New(e.c, e.name, mutex.WithWatchdogTimeout(5*time.Second))
		if err := m.Lock(context.Background()); err != nil {
			return "setup: " + err.Error()
		}
		err := e.lose(m.Unlock)
		locked, _ := mutex.New(e.other, e.name).IsLocked(context.Background())
		switch {
		case errors.Is(err, latchkey.ErrNotHeld) && !locked:
			return fmt.Sprintf("Unlock returned %v although it released the lock", err)
		case err == nil && locked:
			return "Unlock returned nil but the lock is still held"
		case err == nil && m.Err() != nil:
			return fmt.Sprintf("Unlock returned nil but Err is %v", m.Err())
		}
		return ""
	}},
	{"mutex/lock", func(e lostReply) string {
		m := mutex.New(e.c, e.name, mutex.WithWatchdogTimeout(5*time.Second))
		ctx := latchkey.WithOwner(context.Background())
		if err := e.lose(func(c context.Context) error { return m.Lock(latchkey.WithOwnerID(c, latchkey.OwnerID(ctx))) }); err != nil {
			return "" // T09 checks what an acquisition that failed leaves
		}
		if n, err := m.HoldCount(ctx); err != nil || n != 1 {
			return fmt.Sprintf("Lock returned nil; hold count %d (%v), want 1", n, err)
		}
		if err := m.Unlock(ctx); err != nil {
			return fmt.Sprintf("Unlock after Lock: %v", err)
		}
		if locked, _ := mutex.New(e.other, e.name).IsLocked(context.Background()); locked {
			return "one Lock with a lost reply needed two Unlocks: the lock is still held after the first"
		}
		return ""
	}},
	{"semaphore/release", func(e lostReply) string {
		s := semaphore.New(e.c, e.name)
		return permitCounts(e, s.TrySetPermits, func(ctx context.Context) error { return s.Acquire(ctx, 2) },
			func(ctx context.Context) error { return s.Release(ctx, 1) }, s.AvailablePermits, 4, 3)
	}},
	{"semaphore/acquire", func(e lostReply) string {
		s := semaphore.New(e.c, e.name)
		return permitCounts(e, s.TrySetPermits, nil, func(ctx context.Context) error { return s.Acquire(ctx, 2) }, s.AvailablePermits, 3, 5)
	}},
	{"semaphore/try-set-permits", func(e lostReply) string {
		s := semaphore.New(e.c, e.name)
		return trySet(e, s.TrySetPermits, s.AvailablePermits)
	}},
	{"permitsemaphore/release", func(e lostReply) string {
		s := permitsemaphore.New(e.c, e.name)
		var p *permitsemaphore.Permit
		acquire := func(ctx context.Context) (err error) {
			p, err = s.Acquire(ctx, permitsemaphore.Lease(30*time.Second))
			return err
		}
		return permitCounts(e, s.TrySetPermits, acquire, func(ctx context.Context) error { return p.Release(ctx) }, s.AvailablePermits, 5, 4)
	}},
	{"permitsemaphore/acquire", func(e lostReply) string {
		s := permitsemaphore.New(e.c, e.name)
		acquire := func(ctx context.Context) error {
			_, err := s.Acquire(ctx, permitsemaphore.Lease(30*time.Second))
			return err
		}
		return permitCounts(e, s.TrySetPermits, nil, acquire, s.AvailablePermits, 4, 5)
	}},
	{"permitsemaphore/try-set-permits", func(e lostReply) string {
		s := permitsemaphore.New(e.c, e.name)
		return trySet(e, s.TrySetPermits, s.AvailablePermits)
	}},
	{"countdownlatch/count-down", func(e lostReply) string {
		l := countdownlatch.New(e.c, e.name)
		return permitCounts(e, func(ctx context.Context, n int64) (bool, error) { return l.TrySetCount(ctx, 3) }, nil, l.CountDown, l.Count, 2, 3)
	}},
	{"countdownlatch/try-set-count", func(e lostReply) string {
		l := countdownlatch.New(e.c, e.name)
		return trySet(e, l.TrySetCount, l.Count)
	}},
}

// TestT08LostReply: for every write of every primitive, the server's
// reply is lost once after it applied the write, so that go-redis sends it
// again. A write must take effect once: a reentrant unlock releases one
// hold, a release gives back its permits once, a count-down counts once,
// a call that succeeded reports success. Each case runs 3 times.
func TestT08LostReply(t *testing.T) {
	e := newStandalone(t, 1)
	other := newClient(t, e.Server.Addr())
	for _, tc := range lostReplyCases {
		t.Run(tc.name, func(t *testing.T) {
			r := newReport(t)
			for i := range lostReplyTrials {
				if problem := tc.run(lostReply{c: e.Clients[0], other: other, p: e.Proxies[0], name: name(t, i)}); problem != "" {
					r.Violation("%s (trial %d): %s", t.Name(), i, problem)
				}
				r.Fault()
			}
		})
	}
}
