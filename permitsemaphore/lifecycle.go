package permitsemaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

var (
	deleteScript = scripts.Get("pes_delete")
	// Package semaphore's: the keys are laid out alike.
	expireScript = scripts.Get("sem_expire")
	ttlScript    = scripts.Get("sem_ttl")
)

// Delete deletes the semaphore, whatever its permits: Redisson's keys (the
// count and the permits held) and every key latchkey keeps beside them (see
// the package doc). It reports whether the semaphore existed: it had a
// count, permits held, or waiters. Every Acquire waiting in the queue, in
// any latchkey process, then fails with an error matching
// latchkey.ErrDeleted, rather than wait for permits that nobody may ever set
// again. Redisson's waiters, whom Redisson's own delete leaves asleep, are
// woken; they find no permits and wait on, as on a semaphore that was never
// set. So does a latchkey waiter that was not queued yet (its client's Hub
// did not listen yet), whose client polls (latchkey.SetPolling) or missed the news (a broken connection),
// or that was granted permits and had not come for them yet (its attempt
// finds them gone). The permits held are gone: releasing or extending one
// fails with latchkey.ErrNotHeld, and a permit kept alive is lost (see
// Permit.KeepAlive), at once if it was kept through this handle.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) {
	v, err := s.change(ctx, "delete", opDelete, 0, 0)
	if err == nil || v == 1 {
		s.kept.drop(fmt.Errorf("%w: %w", lockerr.ErrLost, lockerr.ErrDeleted))
	}
	return v == 1, err
}

// Expire makes the semaphore expire d from now, and reports whether it
// existed. Its count, the permits held (their leases) and the waiter queue
// expire together, all of it at once, and latchkey's notes beside them no
// later; a permit acquired later lives no longer than the count, as in
// Redisson. Waiters queued then are not told: they wait on as on a
// semaphore that was never set, and queue again with their next attempt.
// SetPermits sets the count anew, which drops its TTL, as in Redisson;
// TrySetPermitsTTL sets one. A d below latchkey.MinLease, zero included,
// or above latchkey.MaxLease returns an error matching
// latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) Expire(ctx context.Context, d time.Duration) (bool, error) {
	if err := lockopt.CheckLease(d); err != nil {
		return false, fmt.Errorf("permitsemaphore: expire %s in %v: %w", s.name, d, err)
	}
	w := rt.Write{Keys: s.life, Args: []any{scripts.Ms(d)}, Sync: s.cfg.Sync.Timeout()}
	v, err := s.answer(ctx, "expire", func(ctx context.Context) rt.Reply {
		return s.resend(ctx, rt.Call{Script: expireScript, Write: w})
	})
	return v == 1, err
}

// TTL returns how long the semaphore lives unless deleted or given another
// TTL: 0 if it does not exist (it has no count and no permits held), and a
// negative duration if it does not expire. The waiter queue beside it is
// not counted: it lasts as long as its waiters.
func (s *Semaphore) TTL(ctx context.Context) (time.Duration, error) {
	ms, err := s.answer(ctx, "TTL of", func(ctx context.Context) rt.Reply {
		return rt.Reply{Cmd: rt.Run(ctx, s.client, ttlScript, s.life[:2])}
	})
	if ms == -2 {
		return 0, err
	}
	return scripts.Millis(ms), err
}

// answer runs a script on the semaphore's keys, as what, and returns its
// integer answer; a 1 that no replica acknowledged comes with that error.
func (s *Semaphore) answer(ctx context.Context, what string, run func(context.Context) rt.Reply) (int64, error) {
	err := rt.Usable(ctx, s.name, s.client)
	var v int64
	if err == nil {
		rep := run(ctx)
		if v, err = first(rep.Cmd); err == nil && v == 1 {
			err = rep.SyncErr() // applied on the master all the same
		}
		err = lockopt.PermitsError(err)
	}
	if err != nil {
		return v, fmt.Errorf("permitsemaphore: %s %s: %w", what, s.name, err)
	}
	return v, nil
}

// change runs the recorded request of op (tryset, with the TTL ttl, or
// delete) with n and returns its answer (see answer).
func (s *Semaphore) change(ctx context.Context, what, op string, n int64, ttl time.Duration) (int64, error) {
	return s.answer(ctx, what, func(ctx context.Context) rt.Reply {
		pub, err := s.cfg.Publish(ctx, s.client)
		if err != nil {
			return rt.Failed(ctx, err)
		}
		c := s.write(op, pub, "", n, keys.Once(s.name, owner.New()))
		if op != opTrySet {
			return s.resend(ctx, c)
		}
		c.Args[7] = scripts.Ms(ttl) // ARGV[8]
		rep := s.resend(ctx, c)
		_, _ = s.handed(rep)
		return rep
	})
}

// first decodes a reply that is an integer, or integers of which the
// first is the answer.
func first(cmd *redis.Cmd) (int64, error) {
	if vs, err := cmd.Int64Slice(); err == nil && len(vs) > 0 {
		return vs[0], nil
	}
	return scripts.Int(cmd)
}

// deletable is a waiter's place in the queue that also reads the letter of
// Delete, after which the waiter's next attempt fails with
// latchkey.ErrDeleted.
type deletable struct {
	*wait.Place
	deleted bool // for the wait loop's goroutine only
}

func (d *deletable) Letter(body string, at time.Time) (bool, time.Duration) {
	d.deleted = d.deleted || body == "deleted"
	if d.deleted {
		return false, 0
	}
	return d.Place.Letter(body, at)
}

// spec has the wait loop give d the letters of s, the place's Spec.
func (d *deletable) spec(s wait.Spec) wait.Spec {
	s.Mail = d
	return s
}
