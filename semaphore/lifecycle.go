package semaphore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

var (
	deleteScript = scripts.Get("sem_delete")
	expireScript = scripts.Get("sem_expire") // shared with package permitsemaphore
	ttlScript    = scripts.Get("sem_ttl")
)

// Delete deletes the semaphore, whatever its count: Redisson's key and every
// key latchkey keeps beside it (see the package doc). It reports whether the
// semaphore existed: it had a count, permits granted to a waiter, or
// waiters. Every Acquire waiting in the queue, in any latchkey process, then
// fails with an error matching latchkey.ErrDeleted, rather than wait for
// permits that nobody may ever set again. Redisson's waiters, whom
// Redisson's own delete leaves asleep, are woken; they find no permits and
// wait on, as on a semaphore that was never set. So does a latchkey waiter
// that was not queued yet (its client's Hub did not listen yet) or whose
// client polls (latchkey.SetPolling) or missed the news (a broken
// connection). Permits acquired before are not affected: releasing them
// creates the semaphore anew, as in Redisson.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) {
	v, err := s.change(ctx, "delete", opDelete, 0, 0)
	return v == 1, err
}

// Expire makes the semaphore expire d from now, and reports whether it
// existed. Its count, the permits granted to waiters and not taken yet,
// and the waiter queue expire together, all of it at once; latchkey's
// notes beside them no later. Waiters queued then are not told: they wait
// on as on a semaphore that was never set, and queue again with their next
// attempt. Calls that set the count anew drop the TTL, as Redisson's
// do (SetPermits, AddPermits); TrySetPermitsTTL sets one. A d below
// latchkey.MinLease, zero included, or above latchkey.MaxLease returns an
// error matching latchkey.ErrInvalidLease and changes nothing.
func (s *Semaphore) Expire(ctx context.Context, d time.Duration) (bool, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return false, fmt.Errorf("semaphore: expire %s: %w", s.name, err)
	}
	if err := lockopt.CheckLease(d); err != nil {
		return false, fmt.Errorf("semaphore: expire %s in %v: %w", s.name, d, err)
	}
	rep := s.resend(ctx, rt.Call{Script: expireScript, Write: rt.Write{
		Keys: s.life, Args: []any{scripts.Ms(d)}, Sync: s.cfg.Sync.Timeout(),
	}})
	v, err := scripts.Int(rep.Cmd)
	if err == nil && v == 1 {
		err = rep.SyncErr()
	}
	if err != nil {
		return v == 1, fmt.Errorf("semaphore: expire %s: %w", s.name, err)
	}
	return v == 1, nil
}

// TTL returns how long the semaphore lives unless deleted or given another
// TTL: 0 if it does not exist (it has no count and no permits granted),
// and a negative duration if it does not expire. The waiter queue beside
// it is not counted: it lasts as long as its waiters.
func (s *Semaphore) TTL(ctx context.Context) (time.Duration, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return 0, fmt.Errorf("semaphore: TTL of %s: %w", s.name, err)
	}
	ms, err := scripts.Int(rt.Run(ctx, s.client, ttlScript, s.life[:2]))
	switch {
	case err != nil:
		return 0, fmt.Errorf("semaphore: TTL of %s: %w", s.name, err)
	case ms == -2:
		return 0, nil
	}
	return scripts.Millis(ms), nil
}

// change runs the recorded request of op (tryset, with the TTL ttl, or
// delete) on n permits and returns its answer; one that changed the
// semaphore (1) but that no replica acknowledged comes with that error.
func (s *Semaphore) change(ctx context.Context, what, op string, n int64, ttl time.Duration) (int64, error) {
	if err := rt.Usable(ctx, s.name, s.client); err != nil {
		return 0, fmt.Errorf("semaphore: %s %s: %w", what, s.name, err)
	}
	pub, err := s.cfg.Publish(ctx, s.client)
	if err != nil {
		return 0, fmt.Errorf("semaphore: %s %s: %w", what, s.name, err)
	}
	c := s.write(op, "", n, pub, keys.Once(s.name, owner.New()))
	if op == opTrySet {
		c.Args[7] = scripts.Ms(ttl) // ARGV[8]
	}
	rep := s.resend(ctx, c)
	var v int64
	if op == opDelete {
		v, err = scripts.Int(rep.Cmd)
	} else {
		v, err = s.answer(rep, pub)
	}
	if err == nil && v == 1 {
		err = rep.SyncErr() // applied on the master all the same
	}
	err = lockopt.PermitsError(err)
	if err != nil {
		return v, fmt.Errorf("semaphore: %s %s: %w", what, s.name, err)
	}
	return v, nil
}

// deletable is a waiter's place in the queue that also reads the letter of
// Delete: the waiter's next attempt then fails with latchkey.ErrDeleted.
type deletable struct {
	*wait.Place
	deleted bool // read by the wait loop's goroutine only
}

// Letter reads a letter to the waiter.
func (d *deletable) Letter(body string, at time.Time) (bool, time.Duration) {
	if body == "deleted" {
		d.deleted = true
		return false, 0 // attempt at once
	}
	return d.Place.Letter(body, at)
}

// spec makes s, the place's Spec, read letters through d.
func (d *deletable) spec(s wait.Spec) wait.Spec {
	s.Mail = d
	return s
}
