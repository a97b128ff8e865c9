package semaphore

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

var (
	acquireScript = scripts.Get("sem_acquire")
	releaseScript = scripts.Get("sem_release")
)

// A Semaphore is a distributed counting semaphore named by a Redis key. It
// must be created with New. A Semaphore is safe for concurrent use by many
// goroutines, and keeps no state of its own: every handle on the same name,
// in any process, sees the same permits.
type Semaphore struct {
	client  redis.UniversalClient
	name    string
	channel string
	cfg     config
}

// New returns a Semaphore for the semaphore called name on client. It does
// no I/O: the permits are set with TrySetPermits, SetPermits, AddPermits or
// Release, and a semaphore that was never set has none. New panics if
// client is nil, name is empty or its braces would split its keys across
// cluster hash slots (see the package latchkey doc on names): these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Semaphore {
	if client == nil {
		panic("semaphore: New: nil client")
	}
	if name == "" {
		panic("semaphore: New: empty name")
	}
	if err := keys.Check(name); err != nil {
		panic("semaphore: New: " + err.Error())
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Semaphore{client: client, name: name, channel: channel(name), cfg: cfg}
}

// channel is Redisson's semaphore channel, redisson_sc:{name}.
func channel(name string) string { return keys.Prefix("redisson_sc", name) }

// Name returns the semaphore's name, which is also its Redis key.
func (s *Semaphore) Name() string { return s.name }

// Acquire takes n permits, blocking until n are available or ctx is done,
// and returns nil once it has them. When ctx ends first Acquire returns an
// error that matches ctx.Err() and leaves the semaphore unchanged: permits
// granted by an attempt still in flight when ctx ended are given back. A
// Redis error is returned wrapped; when one cuts a request off, Redis may
// still have granted the permits, which are then lost like a crashed
// holder's (see the package doc). Acquire returns an error matching
// latchkey.ErrInvalidPermits if n < 1.
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	_, err := s.acquire(ctx, n, -1)
	return err
}

// TryAcquire takes n permits if they become available within wait; a wait
// of zero or less makes a single attempt. It returns true if the permits
// were taken, and false with a nil error if the wait ran out, leaving the
// semaphore unchanged. Other failures are as for Acquire.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	return s.acquire(ctx, n, max(wait, 0))
}

func (s *Semaphore) acquire(ctx context.Context, n int64, budget time.Duration) (bool, error) {
	if n < 1 {
		return false, fmt.Errorf("semaphore: acquire %d permits of %s: %w", n, s.name, lockerr.ErrInvalidPermits)
	}
	// One request for the whole wait: an attempt resent after it took the
	// permits, by go-redis or by the wait loop after an error, finds its
	// record instead of taking them again.
	w := scripts.Write{Keys: []string{s.name}, Args: []any{n}, Once: keys.Once(s.name, owner.New()), Sync: s.cfg.Sync.Timeout()}
	unsure := false // an attempt ended without an answer: it may have taken them
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     s.cfg.HubFor(s.client),
		Channel: s.channel,
		Policy:  notify.WakeCount,
		Need:    int(min(n, 1<<30)),
		Attempt: func(ctx context.Context) (bool, time.Duration, error) {
			rep := acquireScript.Exec(ctx, s.client, w)
			ok, _, err := scripts.Pair(rep.Cmd)
			switch {
			case err != nil:
				unsure = true
				return false, 0, err
			case ok && !rep.Replicated():
				// Given back at once: a failover now would lose the grant.
				_ = s.release(scripts.Undo(ctx), n)
				return false, 0, rep.SyncErr()
			}
			// A refusal has no bound: only a release says when permits
			// come back, and the wait loop's backstop covers a lost one.
			return ok, -1, nil
		},
		Abandon: func(context.Context) {
			if unsure {
				go s.resolve(w, n)
			}
		},
	})
	if err != nil {
		return false, fmt.Errorf("semaphore: acquire %d permits of %s: %w", n, s.name, err)
	}
	return ok, nil
}

// resolve finds out, in the background, whether the acquisition w of n
// permits, given up on without an answer, took them, and gives them back if
// it did; if it did not, it makes sure a late copy of it does not. It has
// until the request record expires: past that, what a request took that
// could not be reached all along is lost, as a crashed holder's permits are.
func (s *Semaphore) resolve(w scripts.Write, n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), scripts.RecordTTL(s.client))
	defer cancel()
	rep, applied, err := acquireScript.Resolve(ctx, s.client, w)
	if ok, _, _ := scripts.Pair(rep.Cmd); err == nil && applied && ok {
		_ = s.release(ctx, n)
	}
}

// Release gives n permits back and wakes the waiters they may satisfy. It
// does not check that the caller acquired them: any goroutine or process
// may release, and releasing more than was acquired raises the count, as in
// Redisson. A semaphore that was never set is created. Release returns an
// error matching latchkey.ErrInvalidPermits if n < 1, or the Redis error wrapped; in
// the latter case the permits may or may not have been given back.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	if n < 1 {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, lockerr.ErrInvalidPermits)
	}
	return s.release(ctx, n)
}

func (s *Semaphore) release(ctx context.Context, n int64) error {
	pub, err := s.cfg.Publish(ctx, s.client)
	if err == nil {
		rep := s.write(ctx, releaseScript, []string{s.name, s.channel}, keys.Once(s.name, owner.New()), n, pub)
		if err = rep.Err(); err == nil {
			err = rep.SyncErr()
		}
	}
	if err != nil {
		return fmt.Errorf("semaphore: release %d permits of %s: %w", n, s.name, err)
	}
	return nil
}

// write runs script as exec does, sending it again through transient
// faults: a request recorded against req is safe to send twice.
func (s *Semaphore) write(ctx context.Context, script *scripts.Script, keys []string, req string, args ...any) scripts.Reply {
	r, _ := script.Resend(ctx, s.client, scripts.Write{Keys: keys, Args: args, Once: req, Sync: s.cfg.Sync.Timeout()})
	return r
}
