package semaphore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/acquire"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Semaphore is a distributed counting semaphore named by a Redis key. It
// must be created with New. A Semaphore is safe for concurrent use by many
// goroutines. Every handle on the same name, in any process, sees the same
// permits; a handle only remembers, for a moment, the permits granted to
// its Acquire calls (see the package doc).
type Semaphore struct {
	client  redis.UniversalClient
	name    string
	channel string   // Redisson's channel
	hubs    string   // prefix of each Hub's channel, where grants are told
	keys    []string // the semaphore scripts' KEYS
	life    []string // the keys Expire and TTL take (see sem_expire.lua)
	cfg     config
}

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits, AddPermits or
// Release, and a semaphore that was never set has none. Any string is a
// valid name, the empty one included (see the package latchkey doc on
// names): on a Redis Cluster, a name whose keys would not share a hash slot
// makes every method of the Semaphore that talks to Redis return an error
// matching latchkey.ErrCrossSlot, without sending anything. New panics if
// client is nil or an option is invalid: these are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	keys.MustClient("semaphore", client)
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	l := keys.SemaphoreOf(name)
	s := &Semaphore{
		client:  client,
		name:    name,
		channel: l.Channel,
		hubs:    l.Hubs,
		cfg:     cfg,
		keys:    []string{l.Name, l.Channel, l.Queue, l.Deadlines, l.Grants, l.Hubs, l.Listeners, l.Turn},
		life:    []string{l.Name, l.Grants, l.Queue, l.Deadlines, l.Listeners, l.Turn},
	}
	return s
}

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.name }

// Acquire takes n permits, blocking until n are available to it or ctx is
// done, and returns nil once it has them. Waiters are served in order: a
// waiter for n permits waits for those ahead of it, and those behind it
// wait for it (see the package doc). When ctx ends first Acquire returns
// an error that matches ctx.Err() and leaves the semaphore unchanged:
// permits granted while it was giving up are given back. A Redis error is
// returned wrapped; when one cuts a request off, Redis may still have
// granted the permits, which are then given back in the background if the
// request can be traced within its record's lifetime, and are otherwise
// lost like a crashed holder's (see the package doc). Acquire returns an
// error matching latchkey.ErrInvalidPermits if n < 1 or n >
// latchkey.MaxPermits, and one matching
// latchkey.ErrDeleted if the semaphore is deleted while it waits (see
// Delete).
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	_, err := s.acquire(ctx, n, -1)
	return err
}

// TryAcquire takes n permits if they become available to it within wait;
// a wait of zero or less makes a single attempt, which fails while others
// wait. It returns true if the permits were taken, and false with a nil
// error if the wait ran out, leaving the semaphore unchanged. Other
// failures are as for Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	return s.acquire(ctx, n, max(wait, 0))
}

func (s *Semaphore) acquire(ctx context.Context, n int64, budget time.Duration) (bool, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return false, fmt.Errorf("semaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	if err := lockopt.CheckPermits(n, 1); err != nil {
		return false, fmt.Errorf("semaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	fail := func(err error) (bool, error) {
		return false, fmt.Errorf("semaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	hub := s.cfg.HubFor(s.client)
	pub, err := s.cfg.Publish(ctx, s.client)
	if err != nil {
		return fail(err)
	}
	key := owner.New() // the letters' address: this call
	entry, op := wait.EntryHub(s.client, hub)+"/"+strconv.FormatInt(n, 10)+"/"+key, opAcquire
	if budget == 0 {
		entry, op = "", opTry // a single attempt never queues
	}
	// One request for the whole wait: an attempt resent after it took the
	// permits, by go-redis or by the wait loop after an error, finds its
	// record instead of taking them again.
	w := s.write(op, entry, n, pub, keys.Once(s.name, owner.New()))
	g := s.giveUp(w, entry, pub, n)
	// Redisson's releases grant nothing: the waiter hears them on
	// Redisson's channel, counting only those that leave enough permits
	// for it; latchkey's leave none that the queue could use.
	place := wait.NewPlace(key, wait.Channel{Name: s.channel, Policy: available, Need: int(min(n, 1<<30))})
	mail := &deletable{Place: place}
	m := acquire.New(acquire.Steps{
		Client: s.client,
		Send: func(ctx context.Context) (acquire.Answer, error) {
			if mail.deleted {
				return acquire.Answer{Refused: lockerr.ErrDeleted}, nil // nothing sent
			}
			// ARGV[1] now (see scripts/fragment/inputs.lua); ARGV[8] try
			// once: so does an attempt whose letters nobody hears yet;
			// ARGV[10] whether the waiter listens yet
			w.Args[0], w.Args[7] = time.Now().UnixMilli(), handoff.Flag(op == opTry || !place.Queue())
			w.Args[9] = handoff.Flag(place.Queue())
			rep := w.Exec(ctx, s.client)
			vs, err := scripts.Ints(rep.Cmd)
			switch {
			case err != nil:
				return acquire.Answer{}, err
			case len(vs) < 3 || vs[0] == 0 && len(vs) < 4:
				return acquire.Answer{}, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
			case vs[len(vs)-1] == 1: // it granted permits to waiters ahead
				s.granted(pub)
			}
			if vs[0] == 1 {
				return acquire.Answer{Granted: true, Reply: rep}, nil
			}
			place.Rank = vs[1]
			// A refusal has no bound, but for the grace of a grant not
			// taken yet: a release grants the permits and says so, and
			// the wait loop's backstop covers a lost letter.
			return acquire.Answer{Retry: scripts.Millis(vs[2]), Reply: rep}, nil
		},
		Undo: func(ctx context.Context) { _ = s.release(ctx, n) },
		Abandon: func(ctx context.Context, unsure bool) {
			if mail.deleted && !unsure {
				g.Took() // the delete took the entry and its grant
				return
			}
			g.Abandon(ctx, unsure, rt.RecordTTL(s.client))
		},
	})
	ok, err := wait.Until(ctx, budget, mail.spec(place.Spec(s.client, "semaphore", s.name, hub, s.hubs, m)))
	if ok {
		g.Took()
	} else {
		g.GaveUp()
	}
	if err != nil {
		return fail(err)
	}
	return ok, nil
}

// available is the wake policy of Redisson's channel, whose messages are
// the permits available: a waiter counts those that leave enough for it.
func available(payload string) int {
	n, err := strconv.Atoi(payload)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// Release gives n permits back and hands them to the waiters at the head
// of the queue that they satisfy, in order. It does not check that the
// caller acquired them: any goroutine or process may release, and
// releasing more than was acquired raises the count, as in Redisson. A
// semaphore that was never set is created. Release returns an error
// matching latchkey.ErrInvalidPermits, releasing nothing, if n < 1 or the
// count would go above latchkey.MaxPermits, or the Redis error wrapped; in
// the latter case the permits may or may not have been given back.
//
// Release returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, err)
	}
	if err := lockopt.CheckPermits(n, 1); err != nil {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, err)
	}
	_, err := wait.Cleanup(ctx, s.client, func(ctx context.Context) (struct{}, error) {
		err := s.release(ctx, n)
		if err == nil {
			rt.Report(s.client, rt.Released, rt.Event{Kind: "semaphore", Name: s.name})
		}
		return struct{}{}, err
	})
	if wait.Pending(err) {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, err)
	}
	return err
}

func (s *Semaphore) release(ctx context.Context, n int64) error {
	pub, err := s.cfg.Publish(ctx, s.client)
	if err == nil {
		rep := s.resend(ctx, s.write(opRelease, "", n, pub, keys.Once(s.name, owner.New())))
		if _, err = s.answer(rep, pub); err == nil {
			err = rep.SyncErr()
		}
		err = lockopt.PermitsError(err)
	}
	if err != nil {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, err)
	}
	return nil
}
