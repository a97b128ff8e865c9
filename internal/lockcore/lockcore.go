// Package lockcore is the reentrant hash lock that mutex and fairlock are
// thin layers over: the owner rules, the wait, the undo of what a failed
// or abandoned acquisition left, the release and its answers, the hold
// books and the queries. What differs between the two, the script and the
// channels a waiter listens on, is a Protocol.
package lockcore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/observe"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Waiter is one Lock or TryLock call.
type Waiter struct {
	ID        string // the owner id it acquires for
	Reentrant bool   // ID came from ctx: it may hold through other handles
	Try       bool   // a single attempt that leaves no trace
	Hub       *notify.Hub
	Pub       string // PUBLISH or SPUBLISH
	// Req is the request record of a re-entry (see scripts.Write.Once), ""
	// for a fresh id, which finds itself holding instead.
	Req     string
	Started time.Time // when the latest attempt was sent
	// Rank is the waiter's place in a queue, for a protocol whose waiters
	// count the releases ahead of them.
	Rank int64
	// Key addresses the letter of a release that grants the lock to this
	// call (see Letter): the owner id, and for an owner that may re-enter
	// a call id after a '/', since one owner may wait in two calls.
	Key string
	// Synced: the latest attempt waited for replicas, so a grant must too.
	Synced bool
	// Foreign: the latest attempt found a holder whose release will not
	// grant (a Redisson client's).
	Foreign bool
	// Holding: the owner holds the lock through this handle already, so
	// its attempt re-enters and never takes a grant (see Reentry).
	Holding bool
	// Queued: an attempt of this call may have joined the queue (the
	// protocol's to keep), so that one that did not skips the queue.
	Queued bool

	grantedAt  time.Time // when the grant was made, at the soonest (see Letter)
	grantToken int64
	ahead      int64 // the most the server's clock is ahead of ours, µs
	dated      bool  // ahead is known
}

// An Attempt is what one acquisition attempt answered.
type Attempt struct {
	OK    bool
	Token int64         // the fencing token, when OK
	Holds int64         // when OK: the owner's holds on the server now
	Retry time.Duration // when not OK: the longest to sleep, or negative
	Reply scripts.Reply // for its replica acknowledgements
}

// A Protocol is how one kind of lock talks to Redis.
type Protocol interface {
	// Attempt runs one acquisition attempt for w.
	Attempt(ctx context.Context, w *Waiter) (Attempt, error)
	// Listen fills in the channels w sleeps on; Attempt, Abandon and
	// Hub are filled in by the Lock.
	Listen(w *Waiter, s *wait.Spec)
	// Dequeue takes w out of the queue, if it joined one, after it gave up.
	Dequeue(ctx context.Context, w *Waiter)
	// Resolve finds out whether w's recorded acquisition (w.Req), given up
	// on without an answer, took the lock, and cancels it if it did not
	// (see scripts.Script.Resolve).
	Resolve(ctx context.Context, w *Waiter) (acquired bool, err error)
	// Release releases one hold of owner id, publishing with pub, recorded
	// against req: -1 not held, 0 holds remain, 1 released.
	Release(ctx context.Context, pub, id string, reentrant bool, req string) scripts.Reply
	// Force deletes the lock whoever holds it, publishing with pub: 1 if it
	// was held.
	Force(ctx context.Context, pub string) scripts.Reply
}

// A Lock is one handle on a reentrant hash lock.
type Lock struct {
	Client redis.UniversalClient
	Pkg    string // "mutex", "fairlock": errors start with it
	Name   string
	Cfg    *lockopt.Common
	Proto  Protocol
	Holds  *hold.Table
	keep   hold.Keeper
}

// New returns a Lock kept alive as cfg says, renewing its holds with the
// renewal of Redisson's hash locks.
func New(client redis.UniversalClient, pkg, name string, cfg *lockopt.Common, proto Protocol) *Lock {
	l := &Lock{Client: client, Pkg: pkg, Name: name, Cfg: cfg, Proto: proto, Holds: hold.New(pkg + ": " + name)}
	l.Holds.Observe(client, pkg, name)
	if cfg.Fixed > 0 {
		l.keep = hold.Fixed(cfg.Fixed)
	} else {
		l.keep = &hold.Watchdog{
			Client: client,
			Kind:   lease.HashLock,
			Keys:   func(string) []string { return []string{name} },
			Args:   func(id string) []any { return []any{id} },
			Lease:  cfg.Watchdog,
			Sync:   cfg.Sync.Timeout(),
			What:   observe.Event{Kind: pkg, Name: name},
		}
	}
	return l
}

// record applies a release's answer for owner id: -1 not held (the hold,
// if recorded, was lost), 0 holds remain, 1 released.
func (l *Lock) record(id string, res int64) {
	switch {
	case res < 0:
		l.Holds.NotHeld(id, "found not held on unlock")
	case res == 0:
		l.Holds.Decremented(id)
	default:
		l.Holds.Released(id)
	}
}

// tooLate reports whether a hold granted by a request sent at since may
// have expired already: its lease, less the drift allowance, has passed.
func (l *Lock) tooLate(since time.Time) bool {
	ttl := l.Cfg.TTL()
	return time.Since(since) >= ttl-lease.Drift(ttl)
}

// errorf wraps err with the lock's package, the operation and its name.
func (l *Lock) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s %s: %w", l.Pkg, op, l.Name, err)
}

// Lock acquires the lock within budget (negative: none; zero: one try that
// leaves no trace) and reports whether it did.
func (l *Lock) Lock(ctx context.Context, budget time.Duration) (bool, error) {
	_, ok, err := l.lock(ctx, budget)
	return ok, err
}

func (l *Lock) lock(ctx context.Context, budget time.Duration) (*hold.Hold, bool, error) {
	w := &Waiter{Try: budget == 0, Hub: l.Cfg.HubFor(l.Client)}
	w.ID, w.Reentrant = owner.FromContext(ctx)
	if !w.Reentrant {
		// A fresh id per plain Lock: goroutines sharing the handle exclude
		// each other, and a lost reply can be undone without touching
		// another goroutine's hold.
		w.ID = owner.New()
		w.Key = w.ID
	} else {
		// A re-entry is recorded against its request, so that a resend
		// does not count twice; a fresh id finds itself holding instead.
		call := owner.New()
		w.Req = keys.Once(l.Name, call)
		w.Key = w.ID + "/" + call
		w.Holding = l.Holds.Get(w.ID) != nil
	}
	pub, err := l.Cfg.Publish(ctx, l.Client)
	if err != nil {
		return nil, false, l.errorf("lock", err)
	}
	w.Pub = pub
	var (
		token  int64
		holds  int64 // the owner's holds on the server after the acquisition
		unsure bool  // an attempt failed without a reply: it may have been applied
	)
	spec := wait.Spec{Hub: w.Hub, Client: l.Client, Kind: l.Pkg, Name: l.Name, Reentry: w.Holding}
	l.Proto.Listen(w, &spec)
	// since is when the earliest attempt that may have been granted was
	// sent: an attempt without an answer may have been applied, and a later
	// one (a resend, or one that finds the hold its request record keeps)
	// then answers for it. The hold is valid from there.
	var since time.Time
	spec.Attempt = func(ctx context.Context) (bool, time.Duration, error) {
		now := time.Now()
		if since.IsZero() {
			since = now
		}
		w.Started = now
		a, err := l.Proto.Attempt(ctx, w)
		w.Synced = a.Reply.Replicas > 0
		switch {
		case err != nil:
			unsure = true
			return false, 0, err
		case a.OK && !a.Reply.Replicated():
			// Undone at once: a failover now would hand the lock to another.
			_, _ = l.releaseOnce(scripts.Undo(ctx), w.ID, w.Reentrant)
			return false, 0, a.Reply.SyncErr()
		case a.OK && l.tooLate(since):
			// The answer came back after the lease may have run out: the
			// lock may be someone else's by now. Give it back and start
			// again, under a new request.
			_, _ = l.releaseOnce(scripts.Undo(ctx), w.ID, w.Reentrant)
			since, unsure = time.Time{}, false
			if w.Reentrant {
				w.Req = keys.Once(l.Name, owner.New())
			}
			return false, 0, nil
		case a.OK:
			token, holds, w.Started = a.Token, a.Holds, since
			return true, 0, nil
		}
		since = time.Time{} // refused: nothing of this request was granted
		return false, a.Retry, nil
	}
	spec.Abandon = func(ctx context.Context) {
		if !w.Try {
			l.Proto.Dequeue(ctx, w)
		}
		switch {
		case !unsure:
		case !w.Reentrant:
			// The grant may have landed after we gave up: a fresh id holds
			// nothing else, so releasing it undoes just that.
			if res, err := l.releaseOnce(ctx, w.ID, false); err == nil {
				l.record(w.ID, res)
			}
		default:
			// An owner's re-entry that may have counted: its record says,
			// and a count the caller was told failed is taken back, so
			// that the owner's counts here and on the server agree.
			acquired, err := l.Proto.Resolve(ctx, w)
			switch {
			case err != nil:
				l.Holds.Uncertain(w.ID)
			case acquired:
				_, _ = l.releaseOnce(ctx, w.ID, true)
			}
		}
	}
	ok, err := wait.Until(ctx, budget, spec)
	if err != nil {
		return nil, false, l.errorf("lock", err)
	}
	if !ok {
		return nil, false, nil
	}
	if w.Holding && holds > 1 && l.Holds.WasLost(w.ID) {
		// The hold this re-entered was declared lost while the re-entry was
		// on its way, and the server counted the re-entry on top of it:
		// the caller now holds once, so the lost counts go, lest the lock
		// stay held after the caller's Unlock.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait.AbandonTimeout)
		for ; holds > 1; holds-- {
			if _, err := l.releaseOnce(ctx, w.ID, true); err != nil {
				break
			}
		}
		cancel()
	}
	if !w.grantedAt.IsZero() {
		// Granted by a release, and told by its letter: no attempt ran.
		return l.Holds.Acquired(w.ID, w.ID, 0, !w.Reentrant, w.grantToken, w.grantedAt, granted{l, w.grantedAt, !w.Reentrant}), true, nil
	}
	return l.Holds.Acquired(w.ID, w.ID, 0, !w.Reentrant, token, w.Started, l.keep), true, nil
}

// LockContext acquires the lock as Lock does and returns a copy of ctx that
// is cancelled when this hold ends: by an unlock of its last count, or by
// its loss, when context.Cause reports an error matching ErrLost.
func (l *Lock) LockContext(ctx context.Context) (context.Context, error) {
	h, ok, err := l.lock(ctx, -1)
	if !ok {
		return nil, err
	}
	return l.Holds.Context(ctx, h), nil
}

// Unlock releases one hold: the owner's carried by ctx, else the handle's
// current plain hold.
func (l *Lock) Unlock(ctx context.Context) error {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		var ok bool
		if id, ok = l.Holds.ClaimPlain(hold.Any); !ok {
			return l.errorf("unlock", lockerr.ErrNotHeld)
		}
	}
	// An owner whose hold this handle saw lost is not told otherwise, but
	// what is left of its hold on the server (a renewal that applied
	// although its answer was lost) is released all the same.
	lost := reentrant && l.Holds.WasLost(id)
	res, err := l.releaseOnce(ctx, id, reentrant)
	if lost && (err == nil || errors.Is(err, lockerr.ErrNotReplicated)) {
		res, err = -1, nil
	}
	switch {
	case err != nil && !errors.Is(err, lockerr.ErrNotReplicated):
		// Whether the release applied is unknown. Either way this hold is
		// over for the handle, as for Redisson: the watchdog stops, and a
		// release that did not apply ends with the lease on the server.
		l.Holds.Abandoned(id)
		return l.errorf("unlock", err)
	case res < 0:
		l.record(id, res)
		return l.errorf("unlock", lockerr.ErrNotHeld)
	case err != nil:
		l.record(id, res)
		return l.errorf("unlock", fmt.Errorf("released on the master: %w", err))
	}
	l.record(id, res)
	return nil
}

// releaseOnce runs the release: -1 not held, 0 still held, 1 released. An
// error matching ErrNotReplicated comes with the answer of a release that
// the master applied but no replica acknowledged.
func (l *Lock) releaseOnce(ctx context.Context, id string, reentrant bool) (int64, error) {
	req := keys.Once(l.Name, owner.New())
	var rep scripts.Reply
	err := wait.Retry(ctx, func(ctx context.Context) error {
		pub, err := l.Cfg.Publish(ctx, l.Client)
		if err != nil {
			return err
		}
		rep = l.Proto.Release(ctx, pub, id, reentrant, req) // recorded: safe to resend
		return rep.Err()
	})
	if err != nil {
		return 0, err
	}
	res, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, err
	}
	if err := rep.SyncErr(); err != nil && res >= 0 {
		return res, err
	}
	return res, nil
}

// ForceUnlock deletes the lock whoever holds it and reports whether it was
// held.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	pub, err := l.Cfg.Publish(ctx, l.Client)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	n, err := scripts.Int(l.Proto.Force(ctx, pub).Cmd)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	return n == 1, nil
}

// IsLocked reports whether anyone holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	ok, err := hold.IsLocked(ctx, l.Client, l.Name)
	if err != nil {
		return false, l.errorf("query", err)
	}
	return ok, nil
}

// HoldCount returns how many holds the caller's owner has: the owner
// carried by ctx, or without one the handle's current plain hold.
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = l.Holds.CurrentPlain(hold.Any); !ok {
			return 0, nil
		}
	}
	n, err := hold.Count(ctx, l.Client, l.Name, id)
	if err != nil {
		return 0, l.errorf("query", err)
	}
	return n, nil
}

// TTL returns how long the lock stays held unless renewed or unlocked: 0
// if it is not held, negative if its key has no TTL.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	d, err := hold.TTL(ctx, l.Client, l.Name)
	if err != nil {
		return 0, l.errorf("query", err)
	}
	return d, nil
}

// Done returns the channel of the handle's current hold (see hold.Table).
func (l *Lock) Done() <-chan struct{} { return l.Holds.Done(hold.Any) }

// Err returns why the handle's current hold ended, if it did.
func (l *Lock) Err() error { return l.Holds.Err(hold.Any) }

// Locker returns a sync.Locker over Lock and Unlock (see hold.Locker).
func (l *Lock) Locker() sync.Locker {
	return hold.Locker(l.Pkg, func(ctx context.Context) error {
		_, err := l.Lock(ctx, -1)
		return err
	}, l.Unlock)
}
