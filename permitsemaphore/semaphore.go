package permitsemaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

var acquireScript = scripts.Get("pes_acquire")

// permanent is the lease end Redisson stores for a permit without a lease.
const permanent = 922337203685477

// A Semaphore is a distributed counting semaphore whose permits have ids
// and leases, named by a Redis key. It must be created with New. A
// Semaphore is safe for concurrent use by many goroutines, and keeps no
// state of its own: every handle on the same name, in any process, sees the
// same permits.
type Semaphore struct {
	client  redis.UniversalClient
	name    string
	timeout string // {name}:timeout
	channel string // redisson_sc:{name}
	cfg     config
}

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits or
// AddPermits, and a semaphore that was never set has none. New panics if
// client is nil, name is empty or its braces would split its keys across
// cluster hash slots (see the package latchkey doc on names): these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	if client == nil {
		panic("permitsemaphore: New: nil client")
	}
	if name == "" {
		panic("permitsemaphore: New: empty name")
	}
	if err := keys.Check(name); err != nil {
		panic("permitsemaphore: New: " + err.Error())
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Semaphore{
		client:  client,
		name:    name,
		timeout: keys.Suffix(name, "timeout"),
		channel: keys.Prefix("redisson_sc", name),
		cfg:     cfg,
	}
}

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.name }

// Acquire takes a permit, blocking until one is available or ctx is done,
// and returns it. The permit returns to the pool by itself lease after it
// was taken unless released or extended before; a lease of zero or less
// makes it permanent. When ctx ends first Acquire returns an error that
// matches ctx.Err(); otherwise it returns the Redis error, wrapped. On
// failure the semaphore is left unchanged: a permit whose grant landed
// while Acquire was giving up is released. Asking a semaphore for more
// permits than it has in all, available and held, fails at once with an
// error matching latchkey.ErrInvalidPermits rather than wait for AddPermits.
func (s *Semaphore) Acquire(ctx context.Context, lease Lease) (*Permit, error) {
	ps, _, err := s.acquire(ctx, 1, -1, lease)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TryAcquire takes a permit if one becomes available within wait; a wait
// of zero or less makes a single attempt. It returns the permit and true
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
// same lease. It returns an error matching latchkey.ErrInvalidPermits if n < 1.
// Other failures are as for Acquire.
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
	if n < 1 {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, lockerr.ErrInvalidPermits)
	}
	fail := func(err error) ([]*Permit, bool, error) {
		return nil, false, fmt.Errorf("permitsemaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	hub := s.cfg.HubFor(s.client)
	pub, err := hub.PublishCommand(ctx)
	if err != nil {
		return fail(err)
	}
	ps, raw, err := newPermits(s, n)
	if err != nil {
		return fail(err)
	}
	// ARGV: now, publish command, lease end, ids...
	args := append([]any{0, pub, 0}, raw...)
	unsure := false // an attempt failed without a reply: it may have landed
	// One request for the whole wait: a resend finds its record.
	req := keys.Once(s.name, owner.New())
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     hub,
		Channel: s.channel,
		Policy:  notify.WakeCount,
		Need:    n,
		Attempt: func(ctx context.Context) (bool, time.Duration, error) {
			if err := ctx.Err(); err != nil {
				return false, 0, err
			}
			now := time.Now()
			args[0], args[2] = now.UnixMilli(), leaseEnd(now, lease)
			rep := s.exec(ctx, acquireScript, s.scriptKeys(), req, args...)
			vs, err := scripts.Ints(rep.Cmd)
			switch {
			case err == nil && len(vs) != 2:
				err = fmt.Errorf("latchkey: script reply: want 2 integers, got %d", len(vs))
			case err != nil:
			case vs[0] < 0:
				return false, 0, fmt.Errorf("%w: the semaphore has %d in all", lockerr.ErrInvalidPermits, vs[1])
			case vs[0] == 1 && !rep.Replicated():
				// Given back at once: a failover now would lose the grant.
				_, _ = s.release(scripts.Undo(ctx), false, raw...)
				return false, 0, rep.SyncErr()
			default:
				// retry: until the earliest lease ends, when the next attempt
				// takes the expired permit back even if nobody publishes.
				return vs[0] == 1, scripts.Millis(vs[1]), nil
			}
			unsure = true
			return false, 0, err
		},
		Abandon: func(context.Context) {
			if unsure {
				go s.resolve(scripts.Write{Keys: s.scriptKeys(), Args: args, Once: req}, raw)
			}
		},
	})
	if err != nil {
		return fail(err)
	}
	if !ok {
		return nil, false, nil
	}
	return ps, true, nil
}

// A Lease is how long a permit stays held unless released or extended:
// when it runs out, the permit returns to the pool by itself, so a crashed
// holder's permits come back. A lease of zero or less, Forever, makes the
// permit permanent. It has a type of its own so that it cannot be swapped
// with a wait by mistake: TryAcquire(ctx, time.Second, permitsemaphore.Lease(time.Minute)).
type Lease time.Duration

// Forever is the lease of a permanent permit.
const Forever Lease = 0

// resolve finds out, in the background, whether the acquisition w of the
// permits raw, given up on without an answer, took them, and releases them
// if it did; if it did not, it makes sure a late copy of it does not. It
// has until the request record expires.
func (s *Semaphore) resolve(w scripts.Write, raw []any) {
	ctx, cancel := context.WithTimeout(context.Background(), scripts.RecordTTL(s.client))
	defer cancel()
	rep, applied, err := acquireScript.Resolve(ctx, s.client, w)
	if ok, _, _ := scripts.Pair(rep.Cmd); err == nil && applied && ok {
		_, _ = s.release(ctx, false, raw...)
	}
}

// leaseEnd returns the lease end a permit taken at now stores.
func leaseEnd(now time.Time, lease Lease) int64 {
	if lease <= 0 {
		return permanent
	}
	return now.UnixMilli() + scripts.Ms(time.Duration(lease))
}

// scriptKeys returns KEYS for the scripts that take the name, the timeout zset
// and the channel.
func (s *Semaphore) scriptKeys() []string { return []string{s.name, s.timeout, s.channel} }

// write runs script as exec does, sending it again through transient
// faults: a request recorded against req, or one that sets an absolute
// state, is safe to send twice.
func (s *Semaphore) write(ctx context.Context, script *scripts.Script, keys []string, req string, args ...any) scripts.Reply {
	r, _ := script.Resend(ctx, s.client, scripts.Write{Keys: keys, Args: args, Once: req, Sync: s.cfg.Sync.Timeout()})
	return r
}

// exec runs script as one request that changes the semaphore, recorded
// against req unless that is "".
func (s *Semaphore) exec(ctx context.Context, script *scripts.Script, keys []string, req string, args ...any) scripts.Reply {
	return script.Exec(ctx, s.client, scripts.Write{Keys: keys, Args: args, Once: req, Sync: s.cfg.Sync.Timeout()})
}
