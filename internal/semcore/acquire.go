package semcore

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey/internal/acquire"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

// An Acquisition is what one Acquire call asks for, as its package says.
type Acquisition struct {
	N int64 // permits
	// A permit semaphore's: the first permit's id (16 raw bytes), from
	// which the others follow, and the lease end of permits taken at a
	// time.
	First    string
	LeaseEnd func(sent time.Time) int64
	// Undo gives back what a grant that cannot be kept, or an attempt
	// that went unanswered and applied, took.
	Undo func(ctx context.Context)
}

// Acquire acquires a's permits within budget (negative: none; zero: a
// single attempt, which never queues) and reports whether it did, and
// since when the hold is valid: the earliest attempt that may have made
// the grant.
//
// One request serves the whole wait: an attempt resent after it took the
// permits, by go-redis or by the wait loop after an error, finds its
// record instead of taking them again. A waiter queues once its Hub
// listens for its letters (<hub id>/<permits>/<key>, key addressing
// them: a permit semaphore's first permit id in hex). Redisson's releases
// grant nothing: the waiter hears them on Redisson's channel, and the head
// of the queue attempts on those that leave enough permits for it.
func (c *Core) Acquire(ctx context.Context, budget time.Duration, a Acquisition) (time.Time, bool, error) {
	fail := func(err error) (time.Time, bool, error) {
		return time.Time{}, false, c.Errorf(err, "acquire %d permits of", a.N)
	}
	if err := rt.Usable(ctx, c.Name, c.Client); err != nil {
		return fail(err)
	}
	if err := lockopt.CheckPermits(a.N, 1); err != nil {
		return fail(err)
	}
	snd := c.Sender()
	hub := snd.Hub()
	// A semaphore's waiter counts the messages (the permits available)
	// that leave enough for it; a permit semaphore's, those that say some
	// were released.
	key, need := owner.New(), int(min(a.N, 1<<30))
	if c.Leases {
		key, need = hex.EncodeToString([]byte(a.First)), 1
	}
	entry := ""
	if budget != 0 {
		entry = wait.EntryHub(c.Client, hub) + "/" + strconv.FormatInt(a.N, 10) + "/" + key
	}
	record, ear := c.Record(), handoff.Ear(hub.Linger())
	request := func(try, listens bool) scripts.Request {
		if c.Leases {
			return scripts.PesAcquire{Sem: c.Keys, Entry: entry, LeaseEnd: a.LeaseEnd(time.Now()), Try: try, Ear: ear,
				Listens: listens, First: a.First, N: int(a.N), Record: record}.Request()
		}
		return scripts.SemAcquire{Sem: c.Keys, Entry: entry, Permits: a.N, Try: try, Ear: ear, Listens: listens, Record: record}.Request()
	}
	place := wait.NewPlace(key, wait.Channel{Name: c.Keys.Channel, Policy: available, Need: need})
	mail := &deletable{Place: place}
	steps := acquire.Steps{
		Client: c.Client,
		Send: func(ctx context.Context) (acquire.Answer, error) {
			if err := ctx.Err(); err != nil {
				return acquire.Answer{Refused: err}, nil // nothing sent
			}
			if mail.deleted.Load() {
				return acquire.Answer{Refused: lockerr.ErrDeleted}, nil
			}
			// An attempt whose letters nobody hears yet tries once.
			return c.answer(snd.Send(ctx, request(entry == "" || !place.Queue(), place.Queue())), place)
		},
		Undo: a.Undo,
		Settle: func(ctx context.Context) (bool, error) {
			rep, applied, err := snd.Resolve(ctx, request(true, false))
			if err != nil {
				return false, err
			}
			vs, _ := scripts.Ints(rep.Cmd)
			return applied && len(vs) > 0 && vs[0] == 1, nil
		},
		Gone: mail.deleted.Load, // the delete took the entry and its grant
		// A grant of permits to a waiter that gave up must come back.
		Park: true, Shared: c.Cfg.Hub == nil,
	}
	if entry != "" {
		steps.Leave = func(ctx context.Context) error { return c.dequeue(ctx, snd, entry, ear) }
	}
	m := acquire.New(steps)
	ok, err := wait.Until(ctx, budget, mail.spec(place.Spec(c.Client, c.Pkg, c.Name, hub, c.Keys.Hubs, m)))
	if err != nil {
		return fail(err)
	}
	return m.Since(), ok, nil
}

// answer decodes rep, the reply of an attempt: {1, ..., handed} when
// granted; else a semaphore's {0, rank, retry, handed} and a permit
// semaphore's {0, retry, rank, handed}, rank being the waiter's place in
// the queue and retry a bound on its sleep in ms, or {-1, total, handed}
// when the permit semaphore has fewer permits in all than asked for.
func (c *Core) answer(rep rt.Reply, place *wait.Place) (acquire.Answer, error) {
	vs, err := scripts.Ints(rep.Cmd)
	switch {
	case err != nil:
		return acquire.Answer{}, err
	case len(vs) < 3 || vs[0] == 0 && len(vs) < 4:
		return acquire.Answer{}, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
	case vs[len(vs)-1] == 1: // it granted permits to waiters ahead
		c.granted()
	}
	switch {
	case vs[0] < 0:
		return acquire.Answer{Refused: fmt.Errorf("%w: the semaphore has %d in all", lockerr.ErrInvalidPermits, vs[1])}, nil
	case vs[0] == 1:
		return acquire.Answer{Granted: true, Reply: rep}, nil
	}
	rank, retry := vs[1], vs[2]
	if c.Leases {
		rank, retry = vs[2], vs[1]
	}
	place.Rank = rank
	return acquire.Answer{Retry: scripts.Millis(retry), Reply: rep}, nil
}

// available is the wake policy of Redisson's channel, whose messages are
// counts of permits available or released.
func available(payload string) int {
	n, err := strconv.Atoi(payload)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// deletable is a waiter's place in the queue that also reads the letter of
// Delete: the waiter's next attempt then fails with lockerr.ErrDeleted.
type deletable struct {
	*wait.Place
	deleted atomic.Bool // Close may ask, from its own goroutine (Steps.Gone)
}

// Letter reads a letter to the waiter.
func (d *deletable) Letter(body string, at time.Time) (bool, time.Duration) {
	if body == "deleted" || d.deleted.Load() {
		d.deleted.Store(true)
		return false, 0 // attempt at once
	}
	return d.Place.Letter(body, at)
}

// spec makes s, the place's Spec, read letters through d.
func (d *deletable) spec(s wait.Spec) wait.Spec {
	s.Mail = d
	return s
}
