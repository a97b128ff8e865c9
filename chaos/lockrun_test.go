package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey"
)

// A Locker is what the lock workload needs of a lock handle: a mutex, a
// fair lock, or one side of a read-write lock.
type Locker interface {
	Lock(ctx context.Context) error
	LockContext(ctx context.Context) (context.Context, error)
	Unlock(ctx context.Context) error
	Done() <-chan struct{}
	Err() error
}

// unlockTries is how often a worker tries an unlock that failed without an
// answer before it gives up on it, as a careful caller would.
const unlockTries = 3

// A LockRun drives workers that take and release locks, recording every
// call in H, checking every grant against Holders, and writing every
// fencing token into Holders' fenced resource.
type LockRun struct {
	R       *Report
	H       *History
	Holders *Holders
	// LockTimeout bounds one Lock call; Hold bounds the time a worker
	// keeps a lock.
	LockTimeout, Hold time.Duration
	// Long is the share of holds kept up to LongHold instead, across
	// several renewals.
	Long     float64
	LongHold time.Duration
	// Reentrant is the share of exclusive holds of a lock with hold
	// counts that its owner takes a second time and releases once before
	// the end of the hold.
	Reentrant float64

	timeouts atomic.Int64 // Lock calls that ran out of LockTimeout
}

// A LockWorker is one client's handle on one lock name.
type LockWorker struct {
	Client int
	Name   string
	Lock   Locker       // the exclusive side
	RLock  Locker       // the read side, if any
	Token  func() int64 // the fencing token of the current hold, if any
	Rand   *rand.Rand
}

// Run cycles until ctx ends, taking the read side with probability
// readShare.
func (lr *LockRun) Run(ctx context.Context, w LockWorker, readShare float64) {
	for ctx.Err() == nil {
		lr.Cycle(ctx, lr.LockTimeout, w, w.RLock != nil && w.Rand.Float64() < readShare)
	}
}

// Cycle takes w's lock (the read side if read) within timeout, keeps it a
// random time up to Hold, and releases it, recording each step. Cycle
// reports whether it acquired the lock.
func (lr *LockRun) Cycle(ctx context.Context, timeout time.Duration, w LockWorker, read bool) bool {
	client, name, l, rnd := w.Client, w.Name, w.Lock, w.Rand
	acquire, release := Acquire, Release
	if read {
		acquire, release, l = RAcquire, RRelease, w.RLock
	}
	_, counted := l.(holdCounter)
	reenter := counted && !read && rnd.Float64() < lr.Reentrant
	if reenter {
		ctx = latchkey.WithOwner(ctx)
	}
	call := lr.H.Now()
	// The hold's own context says when this hold ends, and why: its cause
	// matches ErrLost only for a loss. It is a child of lctx, whose
	// deadline (long after the hold) then cancels it with another cause.
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hctx, err := l.LockContext(lctx)
	ret := lr.H.Now()
	if err != nil {
		lr.H.Add(Op{Client: client, Name: name, Kind: acquire, Outcome: Unknown, Call: call, Return: ret})
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			lr.timeouts.Add(1)
		}
		return false
	}
	var tok int64
	if w.Token != nil && !read {
		tok = w.Token()
	}
	lr.H.Add(Op{Client: client, Name: name, Kind: acquire, Outcome: OK, Token: tok, Call: call, Return: ret})
	lr.R.Acquired(1)
	lr.Holders.Begin(name, hold{client: client, write: !read, token: tok, done: hctx.Done(), called: call})
	if tok != 0 {
		lr.Holders.Write(name, client, tok, hctx.Done())
	}
	lr.keep(rnd)
	if reenter {
		if next, at := lr.reenter(ctx, rnd, l.(holdCounter), hctx); next != nil {
			// The first hold was lost, and the second Lock took the lock
			// anew: a hold of its own from then on.
			lr.H.Add(Op{Client: client, Name: name, Kind: Lost, Outcome: OK, Call: ret, Return: at.call})
			lr.R.Lost()
			lr.Holders.End(name, client)
			tok = 0
			if w.Token != nil {
				tok = w.Token()
			}
			lr.H.Add(Op{Client: client, Name: name, Kind: acquire, Outcome: OK, Token: tok, Call: at.call, Return: at.ret})
			lr.R.Acquired(1)
			lr.Holders.Begin(name, hold{client: client, write: true, token: tok, done: next.Done(), called: at.call})
			hctx, ret = next, at.ret
		}
		lr.Holders.Note(name, client, "after the second of two reentrant holds was released")
		lr.keep(rnd)
	}
	lost := lostCause(hctx)
	end := lr.H.Now()
	lr.Holders.End(name, client)
	if lost {
		lr.H.Add(Op{Client: client, Name: name, Kind: Lost, Outcome: OK, Call: ret, Return: end})
		lr.R.Lost()
	}
	lr.unlock(ctx, client, name, l, release, lost)
	return true
}

// lostCause reports whether the hold whose context is hctx was lost.
func lostCause(hctx context.Context) bool {
	return hctx.Err() != nil && errors.Is(context.Cause(hctx), latchkey.ErrLost)
}

// A span is when a call was made and returned, on the history's clock.
type span struct{ call, ret int64 }

// keep sleeps for the length of a hold.
func (lr *LockRun) keep(rnd *rand.Rand) {
	d := lr.Hold
	if lr.LongHold > 0 && rnd.Float64() < lr.Long {
		d = lr.LongHold
	}
	if d > 0 {
		time.Sleep(time.Duration(rnd.Int64N(int64(d))))
	}
}

// A holdCounter is a lock whose owner can ask how many holds it has.
type holdCounter interface {
	Locker
	HoldCount(ctx context.Context) (int, error)
}

// reenter takes l a second time as the owner in ctx, keeps it, and
// releases that second hold, leaving the first: the Holders check then
// catches an unlock that released both. When the second Lock fails the
// owner may hold once or twice, so it asks its hold count and releases
// down to one. If the first hold, whose context is hctx, was lost by the
// time the second Lock took the lock, that Lock took it anew: reenter then
// returns the new hold's context and the span of its Lock, and leaves it
// held once.
func (lr *LockRun) reenter(ctx context.Context, rnd *rand.Rand, l holdCounter, hctx context.Context) (context.Context, span) {
	at := span{call: lr.H.Now()}
	lctx, cancel := context.WithTimeout(ctx, lr.LockTimeout)
	defer cancel()
	next, err := l.LockContext(lctx)
	at.ret = lr.H.Now()
	if err == nil && lostCause(hctx) {
		return next, at
	}
	if err == nil {
		lr.keep(rnd)
	}
	for range unlockTries {
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		n, err := l.HoldCount(qctx)
		if err == nil && n > 1 {
			err = l.Unlock(qctx)
		}
		cancel()
		if err == nil && n <= 1 {
			return nil, at
		}
	}
	return nil, at
}

// unlock releases l, trying again while the outcome is unknown.
func (lr *LockRun) unlock(ctx context.Context, client int, name string, l Locker, release Kind, lost bool) {
	for range unlockTries {
		call := lr.H.Now()
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		err := l.Unlock(uctx)
		cancel()
		op := Op{Client: client, Name: name, Kind: release, Outcome: OK, Call: call, Return: lr.H.Now()}
		switch {
		case errors.Is(err, latchkey.ErrNotHeld):
			op.Outcome = Refused
			if !lost && errors.Is(l.Err(), latchkey.ErrLost) {
				lr.R.Lost() // signalled by the unlock rather than by Done
			}
		case err != nil:
			op.Outcome = Unknown
		}
		lr.H.Add(op)
		if op.Outcome != Unknown {
			return
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Settle checks that every worker takes and releases its lock within bound
// once the faults have healed: no waiter stays blocked by a fault that is
// over.
func (lr *LockRun) Settle(ctx context.Context, bound time.Duration, workers []LockWorker) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			start := time.Now()
			if !lr.Cycle(ctx, bound, w, false) {
				lr.R.Violation("%s: client %d could not take the lock within %v once the faults had healed", w.Name, w.Client, time.Since(start).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
}
