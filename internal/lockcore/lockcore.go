// Package lockcore is the reentrant hash lock that mutex and fairlock are
// thin layers over: the owner rules, the wait, the undo of what a failed
// or abandoned acquisition left, the release and its answers, the hold
// books and the queries. What differs between the two, the script and the
// channels a waiter listens on, is a Protocol.
package lockcore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/acquire"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Waiter is one Lock or TryLock call.
type Waiter struct {
	ID        string // the owner id it acquires for
	Reentrant bool   // ID came from ctx: it may hold through other handles
	Try       bool   // a single attempt that leaves no trace
	Hub       *notify.Hub
	// Req is the request record of a re-entry (see rt.Write.Once), ""
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
	// HeardRelease: a release on Redisson's channel came since the latest
	// attempt, which may end the waiter's turn after Redisson's waiters.
	HeardRelease bool
	// Holding: the owner holds the lock through this handle already, so
	// its attempt re-enters and never takes a grant (see Reentry).
	Holding bool
	// Queued: an attempt of this call may have joined the queue (the
	// protocol's to keep), so that one that did not skips the queue.
	Queued bool
	// Heard: letters to Key reach the waiter, its Hub's subscription
	// confirmed (see wait.Mail.Live). A protocol whose releases drop a
	// waiter nobody hears must not queue it before.
	Heard bool
	// Polling: the waiter's client polls (see latchkey.SetPolling). Its
	// queue entries name no Hub (see HubID), so releases write them no
	// letters and never take them for gone: it queues at once, and finds
	// a grant by its next look.
	Polling bool

	grantedAt  time.Time // when the grant was made, at the soonest (see Letter)
	grantToken int64
	clock      handoff.Clock // dates grants

	// What the acquisition answered, and how it waits: kept here, with
	// the waiter, so that a Lock allocates them once.
	token int64 // the fencing token
	holds int64 // the owner's holds on the server after the acquisition
	spec  wait.Spec
}

// An Attempt is what one acquisition attempt answered.
type Attempt struct {
	OK    bool
	Token int64         // the fencing token, when OK
	Holds int64         // when OK: the owner's holds on the server now
	Retry time.Duration // when not OK: the longest to sleep, or negative
	Reply rt.Reply      // for its replica acknowledgements
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
	// Release releases one hold of owner id, recorded against req: -1 not
	// held, 0 holds remain, 1 released.
	Release(ctx context.Context, id string, reentrant bool, req string) rt.Reply
	// Force deletes the lock whoever holds it: 1 if it was held.
	Force(ctx context.Context) rt.Reply
	// Delete deletes every key of the lock unless it is held: -1 held, 1
	// deleted, 0 nothing there.
	Delete(ctx context.Context) rt.Reply
	// Alarm says where a holder hears that it was forced out (see
	// hold.Alarm): its Channel, Forced, Counted and Fallback.
	Alarm() hold.Alarm
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

	// What Holds and keep point to, in the handle: one allocation for
	// them all, where a handle made per Lock would pay for each.
	table    hold.Table
	watchdog hold.Watchdog
	alarm    hold.Alarm
	key      [1]string // the renewal's KEYS, read only: a renewal copies it
}

// New returns a Lock kept alive as cfg says, renewing its holds with the
// renewal of Redisson's hash locks.
func New(client redis.UniversalClient, pkg, name string, cfg *lockopt.Common, proto Protocol) *Lock {
	l := &Lock{Client: client, Pkg: pkg, Name: name, Cfg: cfg, Proto: proto, key: [1]string{name}}
	l.table.Init(pkg, name)
	l.Holds = &l.table
	l.Holds.Observe(client)
	if cfg.Fixed > 0 {
		l.keep = hold.Fixed(cfg.Fixed)
	} else {
		l.watchdog = hold.Watchdog{
			Client: client,
			Kind:   lease.HashLock,
			Keys:   func(string) []string { return l.key[:] },
			Args:   func(id string) []any { return []any{id} },
			Lease:  cfg.Watchdog,
			Sync:   cfg.Sync.Timeout(),
			What:   rt.Event{Kind: pkg, Name: name},
		}
		l.keep = &l.watchdog
	}
	l.alarm = proto.Alarm()
	l.alarm.Client, l.alarm.Hub = client, func() *notify.Hub { return cfg.HubFor(client) }
	l.alarm.Key, l.alarm.Field = name, func(id string) string { return id }
	l.keep = hold.Alarmed(l.keep, &l.alarm)
	return l
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
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return nil, false, l.errorf("lock", err)
	}
	w := &Waiter{Try: budget == 0, Hub: l.Cfg.HubFor(l.Client), Polling: rt.Polling(l.Client)}
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
	w.spec = wait.Spec{Client: l.Client, Event: rt.Event{Kind: l.Pkg, Name: l.Name, Reentered: w.Holding}, Hub: w.Hub}
	spec := &w.spec
	if w.Polling {
		spec.Rank = func() int64 { return w.Rank }
	}
	l.Proto.Listen(w, spec)
	steps := acquire.Steps{
		Client: l.Client,
		Send: func(ctx context.Context) (acquire.Answer, error) {
			w.Started = time.Now()
			a, err := l.Proto.Attempt(ctx, w)
			w.Synced = a.Reply.Replicas > 0
			w.token, w.holds = a.Token, a.Holds
			return acquire.Answer{Granted: a.OK, Retry: a.Retry, Reply: a.Reply}, err
		},
		Undo:  func(ctx context.Context) { _, _ = l.releaseOnce(ctx, w.ID, w.Reentrant) },
		Lease: l.Cfg.TTL(),
	}
	if w.Reentrant {
		// A re-entry is recorded against its request; a fresh id finds
		// itself holding instead.
		steps.Restart = func() { w.Req = keys.NewOnce(l.Name) }
	}
	l.giveUp(w, &steps)
	m := acquire.New(steps)
	spec.Call = m
	ok, err := wait.Until(ctx, budget, *spec)
	if err != nil {
		return nil, false, l.errorf("lock", err)
	}
	if !ok {
		return nil, false, nil
	}
	if holds := w.holds; w.Holding && holds > 1 && l.Holds.WasLost(w.ID) {
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
	w.Started = m.Since()
	if !w.grantedAt.IsZero() {
		// Granted by a release, and told by its letter: no attempt ran.
		g := Granted{
			Sender: l.Cfg.Sender(l.Client), Name: l.Name, Grant: keys.LockOf(l.Name).Grant, Lease: l.Cfg.TTL(),
			Then:    l.keep,
			Release: func(ctx context.Context, id string) { _, _ = l.releaseOnce(ctx, id, false) },
			At:      w.grantedAt, Plain: !w.Reentrant,
		}
		return l.Holds.Acquired(w.ID, w.ID, 0, !w.Reentrant, w.grantToken, w.grantedAt, g), true, nil
	}
	return l.Holds.Acquired(w.ID, w.ID, 0, !w.Reentrant, w.token, w.Started, l.keep), true, nil
}

// giveUp fills in the give-up ladder of w's acquisition (see
// acquire.Machine.Abandon): it leaves the queue, unless it never joined,
// and when an attempt went unanswered, a fresh id, which holds nothing
// else, releases what it may have taken, while an owner's re-entry asks
// its record whether it counted, and takes the count back if it did, so
// that the owner's counts here and on the server agree.
func (l *Lock) giveUp(w *Waiter, s *acquire.Steps) {
	if !w.Try {
		s.Leave = func(ctx context.Context) error { l.Proto.Dequeue(ctx, w); return nil }
	}
	if w.Reentrant {
		s.Settle = func(ctx context.Context) (bool, error) { return l.Proto.Resolve(ctx, w) }
		s.Unsettled = func() { l.Holds.Uncertain(w.ID) }
	}
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
