package permitsemaphore

import (
	"context"
	"encoding/hex"
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

// permanent is the lease end Redisson stores for a permit without a lease.
const permanent = 922337203685477

// A Semaphore is a distributed counting semaphore whose permits have ids
// and leases, named by a Redis key. It must be created with New. A
// Semaphore is safe for concurrent use by many goroutines. Every handle on
// the same name, in any process, sees the same permits; a handle only
// remembers, for a moment, the permits granted to its Acquire calls (see
// the package doc).
type Semaphore struct {
	client  redis.UniversalClient
	name    string
	timeout string   // {name}:timeout
	channel string   // redisson_sc:{name}
	hubs    string   // prefix of each Hub's channel, where grants are told
	keys    []string // the permit semaphore scripts' KEYS
	life    []string // the keys Expire and TTL take (see sem_expire.lua)
	cfg     config
	kept    kept // the permits kept alive through this handle
}

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits or AddPermits,
// and a semaphore that was never set has none. Any string is a valid name,
// the empty one included (see the package latchkey doc on names): on a
// Redis Cluster, a name whose keys would not share a hash slot makes every
// method of the Semaphore and of its Permits that talks to Redis return an
// error matching latchkey.ErrCrossSlot, without sending anything. New
// panics if client is nil or an option is invalid: these are programming
// errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	keys.MustClient("permitsemaphore", client)
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	l := keys.SemaphoreOf(name)
	s := &Semaphore{
		client:  client,
		name:    name,
		timeout: l.Leases,
		channel: l.Channel,
		hubs:    l.Hubs,
		cfg:     cfg,
		keys:    []string{l.Name, l.Leases, l.Channel, l.Queue, l.Deadlines, l.Hubs, l.Listeners, l.Turn},
		life:    []string{l.Name, l.Leases, l.Queue, l.Deadlines, l.Listeners, l.Turn},
	}
	return s
}

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.name }

// Acquire takes a permit, blocking until one is available to it or ctx is
// done, and returns it. Waiters are served in order (see the package
// doc). The permit returns to the pool by itself lease after it was taken
// unless released or extended before; Forever makes it permanent. A lease
// that Lease refuses fails at once with an error matching
// latchkey.ErrInvalidLease. When ctx ends first Acquire returns an error
// that matches ctx.Err(); otherwise it returns the Redis error, wrapped.
// On failure the semaphore is left unchanged: a permit whose grant landed
// while Acquire was giving up is released. Asking a semaphore for more
// permits than it has in all, available and held, fails at once with an
// error matching latchkey.ErrInvalidPermits rather than wait for AddPermits,
// and one deleted while Acquire waits fails it with an error matching
// latchkey.ErrDeleted (see Delete).
func (s *Semaphore) Acquire(ctx context.Context, lease Lease) (*Permit, error) {
	ps, _, err := s.acquire(ctx, 1, -1, lease)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TryAcquire takes a permit if one becomes available to it within wait; a
// wait of zero or less makes a single attempt, which fails while others
// wait. It returns the permit and true
// if it was taken, and nil and false with a nil error if the wait ran out,
// leaving the semaphore unchanged. Other failures are as for Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, wait time.Duration, lease Lease) (*Permit, bool, error) {
	ps, ok, err := s.acquire(ctx, 1, max(wait, 0), lease)
	if !ok {
		return nil, false, err
	}
	return ps[0], true, nil
}

// AcquireN takes n permits at once, all or none, blocking until n are
// available or ctx is done, and returns them; each has its own id and the
// same lease. It returns an error matching latchkey.ErrInvalidPermits if
// n < 1 or n > MaxAcquire, or if the semaphore has fewer than n in all
// (see Acquire). Nothing in proportion to n is made before the server
// grants the permits: the ids follow from the first. Other failures are as
// for Acquire.
func (s *Semaphore) AcquireN(ctx context.Context, n int, lease Lease) ([]*Permit, error) {
	ps, _, err := s.acquire(ctx, n, -1, lease)
	return ps, err
}

// TryAcquireN takes n permits at once if n become available within wait;
// a wait of zero or less makes a single attempt. It returns the permits
// and true if they were taken, and nil and false with a nil error if the
// wait ran out, leaving the semaphore unchanged. Other failures are as for
// AcquireN.
func (s *Semaphore) TryAcquireN(ctx context.Context, n int, wait time.Duration, lease Lease) ([]*Permit, bool, error) {
	return s.acquire(ctx, n, max(wait, 0), lease)
}

func (s *Semaphore) acquire(ctx context.Context, n int, budget time.Duration, lease Lease) ([]*Permit, bool, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	if err := checkAcquire(n); err != nil {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	if err := lease.check(); err != nil {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	fail := func(err error) ([]*Permit, bool, error) {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	hub := s.cfg.HubFor(s.client)
	pub, err := s.cfg.Publish(ctx, s.client)
	if err != nil {
		return fail(err)
	}
	first, err := newFirst()
	if err != nil {
		return fail(err)
	}
	// The queue entry names the permits by their number and first id, from
	// which the others follow: a release that grants them to this call
	// acquires them by their ids. The first id addresses letters.
	key := hex.EncodeToString([]byte(first))
	entry, op := wait.EntryHub(s.client, hub)+"/"+strconv.Itoa(n)+"/"+key, opAcquire
	if budget == 0 {
		entry, op = "", opTry // a single attempt never queues
	}
	// One request for the whole wait: a resend finds its record.
	w := s.write(op, pub, entry, 0, keys.Once(s.name, owner.New()), first, n)
	g := s.giveUp(w, pub, entry, first, n)
	// Redisson's releases, and permits whose lease ended, grant nothing:
	// the waiter hears them on Redisson's channel, counting the messages
	// that say some permits are available.
	place := wait.NewPlace(key, wait.Channel{Name: s.channel, Policy: available, Need: 1})
	mail := &deletable{Place: place}
	m := acquire.New(acquire.Steps{
		Client: s.client,
		Send: func(ctx context.Context) (acquire.Answer, error) {
			if err := ctx.Err(); err != nil {
				return acquire.Answer{Refused: err}, nil // nothing sent
			}
			if mail.deleted {
				return acquire.Answer{Refused: lockerr.ErrDeleted}, nil
			}
			sent := time.Now()
			// ARGV[1] now, ARGV[7] lease end, ARGV[8] try once: so does
			// an attempt whose letters nobody hears yet; ARGV[10]
			// whether the waiter listens yet
			w.Args[0], w.Args[6], w.Args[7] = sent.UnixMilli(), leaseEnd(sent, lease), handoff.Flag(op == opTry || !place.Queue())
			w.Args[9] = handoff.Flag(place.Queue())
			rep := w.Exec(ctx, s.client)
			vs, err := scripts.Ints(rep.Cmd)
			switch {
			case err != nil:
				return acquire.Answer{}, err
			case len(vs) < 3 || vs[0] == 0 && len(vs) < 4:
				return acquire.Answer{}, fmt.Errorf("latchkey: script reply: %d integers are too few", len(vs))
			case vs[len(vs)-1] == 1: // it granted permits to waiters ahead
				s.granted()
			}
			switch {
			case vs[0] < 0:
				return acquire.Answer{Refused: fmt.Errorf("%w: the semaphore has %d in all", lockerr.ErrInvalidPermits, vs[1])}, nil
			case vs[0] == 1:
				return acquire.Answer{Granted: true, Reply: rep}, nil
			}
			place.Rank = vs[2]
			// retry: until the earliest lease ends, when the next attempt
			// takes the expired permit back even if nobody publishes.
			return acquire.Answer{Retry: scripts.Millis(vs[1]), Reply: rep}, nil
		},
		Undo: func(ctx context.Context) { _, _ = s.release(ctx, false, permitIDs(first, n)...) },
		Abandon: func(ctx context.Context, unsure bool) {
			if mail.deleted && !unsure {
				g.Took() // the delete took the entry
				return
			}
			g.Abandon(ctx, unsure, rt.RecordTTL(s.client))
		},
	})
	ok, err := wait.Until(ctx, budget, mail.spec(place.Spec(s.client, "permitsemaphore", s.name, hub, s.hubs, m)))
	if ok {
		g.Took()
	} else {
		g.GaveUp()
	}
	if err != nil {
		return fail(err)
	}
	if !ok {
		return nil, false, nil
	}
	// The lease was set by an attempt sent no sooner than m.Since(): a
	// permit kept alive counts its validity from there.
	ps := newPermits(s, permitIDs(first, n))
	for _, p := range ps {
		p.lease, p.since = lease, m.Since()
	}
	return ps, true, nil
}

// MaxAcquire is the most permits one acquisition takes (AcquireN,
// TryAcquireN): the server stores every one of them in one script, which
// holds it up (about a second per 100,000 on a small machine). Redisson's
// acquisition takes fewer still: it passes the ids as arguments, and Lua
// unpacks no more than about 8,000 of them.
const MaxAcquire = 1 << 16

// checkAcquire returns nil if one acquisition may take n permits, and
// otherwise an error matching lockerr.ErrInvalidPermits that says why.
func checkAcquire(n int) error {
	if n > MaxAcquire {
		return fmt.Errorf("%w: %d is above the %d that one acquisition takes", lockerr.ErrInvalidPermits, n, MaxAcquire)
	}
	return lockopt.CheckPermits(int64(n), 1)
}

// available is the wake policy of Redisson's channel, whose messages are
// counts of permits available or released: a waiter counts those above 0.
func available(payload string) int {
	n, err := strconv.Atoi(payload)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// A Lease is how long a permit stays held unless released or extended:
// when it runs out, the permit returns to the pool by itself, so a crashed
// holder's permits come back. Forever, the zero Lease, makes the permit
// permanent, and it is the only lease that does. A negative lease, such as
// Lease(time.Until(deadline)) once the deadline has passed, one below
// latchkey.MinLease (10ms), too short to outlive the round trip that takes
// the permit, and one above latchkey.MaxLease (292 years), longer than
// LeaseTime could report, are refused: a call given one returns an error
// matching latchkey.ErrInvalidLease, does no I/O and changes nothing.
// Lease has a type of its own so that it cannot be swapped with a wait by
// mistake: TryAcquire(ctx, time.Second, permitsemaphore.Lease(time.Minute)).
type Lease time.Duration

// Forever is the lease of a permanent permit.
const Forever Lease = 0

// check returns nil if l is Forever or a lease a permit can have, and
// otherwise an error matching lockerr.ErrInvalidLease.
func (l Lease) check() error {
	if l == Forever {
		return nil
	}
	return lockopt.CheckLease(time.Duration(l))
}

// leaseEnd returns the lease end a permit taken at now stores; lease has
// passed check.
func leaseEnd(now time.Time, lease Lease) int64 {
	if lease == Forever {
		return permanent
	}
	return now.UnixMilli() + scripts.Ms(time.Duration(lease))
}

// countKeys returns KEYS for the scripts that take the name, the timeout
// zset and the channel.
func (s *Semaphore) countKeys() []string { return []string{s.name, s.timeout, s.channel} }

// resend runs w, one request that changes the semaphore, sending it again
// through transient faults: a request recorded against w.Once, or one
// that sets an absolute state, is safe to send twice.
func (s *Semaphore) resend(ctx context.Context, w rt.Call) rt.Reply {
	r, _ := w.Resend(ctx, s.client)
	return r
}
