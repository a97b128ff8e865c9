package multilock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/wait"
)

// A Member is a lock that can be acquired with a context, blocking or
// within a wait, and released. *mutex.Mutex, *fairlock.Mutex, the rwlock
// read and write handles and *redlock.Mutex satisfy it, and so does
// *MultiLock.
//
// TryLock must make a single attempt when wait is zero, and report running
// out of wait as (false, nil). Lock and TryLock must leave the lock not
// held when they fail. A Member that is not also a [LossReporter] cannot
// tell the MultiLock that its hold was lost.
type Member interface {
	Lock(ctx context.Context) error
	TryLock(ctx context.Context, wait time.Duration) (bool, error)
	Unlock(ctx context.Context) error
}

var _ Member = (*MultiLock)(nil)

// maxBackoff caps the random pause between two acquisition rounds that
// collided with each other (see the package documentation).
const maxBackoff = 100 * time.Millisecond

// firstBackoff is the cap of the random pause after the first collision;
// it doubles with each further one up to maxBackoff.
const firstBackoff = 5 * time.Millisecond

// releaseTimeout bounds the releases made after a failed attempt.
const releaseTimeout = 5 * time.Second

// A MultiLock is a set of locks acquired and released together, all or
// nothing. It must be created with New. A MultiLock is safe for concurrent
// use by many goroutines as far as its members are.
type MultiLock struct {
	locks     []Member
	reporters []LossReporter // by member; nil for one that is not
	holds     *hold.Table
}

// New returns a MultiLock over locks, taken in the order given. It does no
// I/O. New panics if locks is empty or one of them is nil.
func New(locks ...Member) *MultiLock {
	if len(locks) == 0 {
		panic("multilock: New: no locks")
	}
	for i, l := range locks {
		if l == nil {
			panic(fmt.Sprintf("multilock: New: lock %d is nil", i))
		}
	}
	m := &MultiLock{
		locks:     append([]Member(nil), locks...),
		reporters: make([]LossReporter, len(locks)),
		holds:     hold.New("multilock", ""),
	}
	for i, l := range locks {
		m.reporters[i], _ = l.(LossReporter)
	}
	return m
}

// Lock acquires every lock of m, blocking until all are held at once or ctx
// is done. It never waits while holding a member, so it cannot deadlock
// with another MultiLock taking the same members in another order. On
// failure Lock returns an error that matches ctx.Err() or wraps the first
// member's error, and holds none of the members. If the owner carried by
// ctx (see latchkey.WithOwner) already holds m, each member is taken once
// more, reentrantly, and m's hold count goes up by one.
func (m *MultiLock) Lock(ctx context.Context) error {
	_, err := m.lock(ctx, -1)
	return err
}

// TryLock acquires every lock of m if they all become available together
// within wait; a wait of zero or less tries each member once. It returns
// true if all were acquired, and false with a nil error if the wait ran
// out, for instance because one member stayed held by someone else. On
// every failure none of the members is held. Other failures are as for
// Lock.
func (m *MultiLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	h, err := m.lock(ctx, max(wait, 0))
	return h != nil, err
}

// lock runs acquisition rounds until all members are held, and returns the
// hold it booked (nil if none); budget is as for wait.Until (negative:
// none, zero: one round).
func (m *MultiLock) lock(ctx context.Context, budget time.Duration) (*hold.Hold, error) {
	var deadline time.Time
	if budget >= 0 {
		deadline = time.Now().Add(budget)
	}
	// The end of each member's hold, caught right after the member was
	// taken: its Done moves on to any later hold of the handle.
	seen := make([]<-chan struct{}, len(m.locks))
	held := -1 // a member already taken by waiting for it
	for round := 0; ; round++ {
		taken, busy, err := m.tryAll(ctx, held, seen)
		if busy < 0 && err == nil {
			return m.book(ctx, seen), nil
		}
		if rerr := m.release(ctx, taken); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		if err != nil {
			return nil, err
		}
		if budget == 0 {
			return nil, nil
		}
		if round > 0 {
			// We waited for a member and lost another right after: someone
			// takes the same members in another order. Step aside for a
			// random moment so that one of us gets through.
			if ok, err := pause(ctx, backoff(round), deadline); !ok {
				return nil, err
			}
		}
		if held, err = m.waitFor(ctx, busy, deadline, seen); held < 0 {
			return nil, err
		}
	}
}

// tryAll tries each member once, in order, starting with the one already
// held (if held >= 0), and notes in seen the end of each hold it takes. It
// stops at the first member that is busy (returned as busy, or -1 if none)
// or fails (err), and returns the members it holds.
func (m *MultiLock) tryAll(ctx context.Context, held int, seen []<-chan struct{}) (taken []int, busy int, err error) {
	if held >= 0 {
		taken = append(taken, held)
	}
	for i, l := range m.locks {
		if i == held {
			continue
		}
		ok, err := l.TryLock(ctx, 0)
		if err != nil {
			return taken, i, m.memberErr(ctx, i, err)
		}
		if !ok {
			return taken, i, nil
		}
		seen[i] = m.doneOf(i)
		taken = append(taken, i)
	}
	return taken, -1, nil
}

// waitFor waits, holding nothing else, until member i is acquired or the
// deadline (zero: none) passes, and notes in seen the end of its hold. It
// returns i once held, or -1 and the error (nil when the deadline passed).
func (m *MultiLock) waitFor(ctx context.Context, i int, deadline time.Time, seen []<-chan struct{}) (int, error) {
	var (
		ok  = true
		err error
	)
	if deadline.IsZero() {
		err = m.locks[i].Lock(ctx)
	} else {
		left := time.Until(deadline)
		if left <= 0 {
			return -1, nil
		}
		ok, err = m.locks[i].TryLock(ctx, left)
	}
	switch {
	case err != nil:
		return -1, m.memberErr(ctx, i, err)
	case !ok:
		return -1, nil
	}
	seen[i] = m.doneOf(i)
	return i, nil
}

// release unlocks the members taken by a failed attempt, concurrently, with
// a context that is not cancelled.
func (m *MultiLock) release(ctx context.Context, taken []int) error {
	if len(taken) == 0 {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	return errors.Join(m.unlock(rctx, taken)...)
}

// Unlock releases one hold of m, that is one hold of every member,
// concurrently, whichever goroutine locked it: with an owner in ctx that
// owner's, without one the members' current plain holds. It returns nil if
// every member was released, and otherwise the members' errors joined,
// each naming its member; a member that was not held, its hold lost
// included, gives an error matching latchkey.ErrNotHeld. The other members
// are released all the same. A member found not held ends m's hold as
// lost, if m had not seen the loss yet.
//
// Unlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (m *MultiLock) Unlock(ctx context.Context) error {
	_, err := wait.Cleanup(ctx, nil, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, m.unlockAll(ctx)
	})
	if wait.Pending(err) {
		return fmt.Errorf("multilock: unlock: %w", err)
	}
	return err
}

// unlockAll is Unlock's clean-up (see wait.Cleanup).
func (m *MultiLock) unlockAll(ctx context.Context) error {
	// The hold leaves the books before any member is released, so that
	// its watcher does not take this release for a loss.
	h, last := m.detach(ctx)
	all := make([]int, len(m.locks))
	for i := range all {
		all[i] = i
	}
	errs := m.unlock(ctx, all)
	if h != nil {
		m.settle(h, last, errs)
	}
	return errors.Join(errs...)
}

// detach takes one count of the hold an Unlock with ctx releases off the
// books: the owner's, or the newest plain one. It returns that hold (nil if
// m has none, such as after its loss) and whether the count was its last.
func (m *MultiLock) detach(ctx context.Context) (*hold.Hold, bool) {
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = m.holds.ClaimPlain(hold.Any); !ok {
			return nil, false
		}
	}
	return m.holds.Detach(id)
}

// unlock releases the given members concurrently and returns their errors,
// in the same order.
func (m *MultiLock) unlock(ctx context.Context, members []int) []error {
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for k, i := range members {
		wg.Go(func() {
			if err := m.locks[i].Unlock(ctx); err != nil {
				errs[k] = fmt.Errorf("multilock: unlock %s: %w", m.label(i), err)
			}
		})
	}
	wg.Wait()
	return errs
}

// memberErr reports a member's failure: ctx's own error when ctx ended, so
// that it matches ctx.Err() however the member wrapped it.
func (m *MultiLock) memberErr(ctx context.Context, i int, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("multilock: %s: %w", m.label(i), err)
}

// backoff returns a random pause for the given round (>= 1): up to
// firstBackoff, doubling each round, capped at maxBackoff.
func backoff(round int) time.Duration {
	limit := maxBackoff
	if round < 8 {
		limit = min(firstBackoff<<(round-1), maxBackoff)
	}
	return rand.N(limit) + 1
}

// pause sleeps for d, cut short by the deadline (zero: none). It returns
// false when the deadline passed (with a nil error) or ctx ended.
func pause(ctx context.Context, d time.Duration, deadline time.Time) (bool, error) {
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		d = min(d, left)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}
