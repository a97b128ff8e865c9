package election

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// An Election is one candidate's handle on a leader election named by a
// Redis key. It must be created with New. An Election is safe for
// concurrent use by many goroutines; it campaigns for one leadership at a
// time. Anyone may read or observe the leader through any handle.
type Election struct {
	client redis.UniversalClient
	keys   keys.Election
	cfg    config
	m      *mutex.Mutex
	turn   chan struct{} // held from a Campaign's start to its leadership's end

	mu   sync.Mutex
	id   string // the leadership's owner id, "" when not leading
	term int64
}

// New returns an Election for the election called name on client. It does
// no I/O. Any string is a valid name (see the package latchkey doc on
// names). New panics if client is nil or an option is invalid: these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Election {
	keys.MustClient("election", client)
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return &Election{
		client: client,
		keys:   keys.ElectionOf(name),
		cfg:    cfg,
		m:      mutex.New(client, name, cfg.lock...),
		turn:   make(chan struct{}, 1),
	}
}

// Name returns the election's name, which is also the Redis key of its lock.
func (e *Election) Name() string { return e.keys.Name }

// Campaign blocks until this candidate leads the election, or ctx is done,
// and then proclaims value as the leader's. It returns a context that is
// cancelled when the leadership ends: by Resign (context.Canceled), or by
// loss (its lease could not be kept, the lock was deleted or
// force-unlocked), and then context.Cause reports an error matching
// latchkey.ErrLost that says why.
//
// The leadership context carries ctx's values but does not end with ctx:
// ctx only bounds the campaign. A leadership outlives the call that won
// it (a campaign is often given a timeout, and a leader goes on leading
// long after), and Redis, not ctx, says when it ends: a context that
// ended with ctx would report a leadership over while the lock is still
// held, and no other candidate could take it. To give the leadership up
// when ctx ends, resign then, for instance with context.AfterFunc(ctx,
// func() { e.Resign(context.Background()) }).
//
// A Campaign on a handle that leads, or campaigns, waits for that
// leadership to end first. On failure Campaign returns an error that
// matches ctx.Err() or wraps the Redis error, and leaves nothing held.
func (e *Election) Campaign(ctx context.Context, value string) (context.Context, error) {
	if err := rt.Usable(ctx, e.keys.Name, e.client); err != nil {
		return nil, e.errorf("campaign", err)
	}
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, e.errorf("campaign", ctx.Err())
	}
	id := owner.New()
	if err := e.m.Lock(owner.NewContext(ctx, id)); err != nil {
		<-e.turn
		return nil, e.errorf("campaign", err)
	}
	done, term := e.m.Done(), e.m.Token() // the handle's only hold: this one
	if err := e.proclaim(ctx, id, value, term); err != nil {
		e.resign(ctx, id)
		<-e.turn
		return nil, e.errorf("campaign", err)
	}
	lctx, end := context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), termKey{}, term))
	e.mu.Lock()
	e.id, e.term = id, term
	e.mu.Unlock()
	go e.lead(done, end)
	return lctx, nil
}

// lead ends the leadership's context when its hold ends, and lets the
// handle campaign again.
func (e *Election) lead(done <-chan struct{}, end context.CancelCauseFunc) {
	<-done
	cause := e.m.Err() // of this hold: the handle takes no other before turn is free
	if cause == nil {
		cause = context.Canceled
	}
	e.mu.Lock()
	e.id, e.term = "", 0
	e.mu.Unlock()
	end(cause)
	<-e.turn
}

// Resign gives the leadership up: the lock goes to the next candidate in
// line, and the leader's record is deleted. It returns an error matching
// latchkey.ErrNotHeld if this handle does not lead, including when its
// leadership was lost. The loss of a leadership is signalled as soon as
// its validity may have ended, which can happen while a Resign is on its
// way: a nil Resign then says that the release went through all the same.
// Like an Unlock, Resign returns by ctx's deadline and its requests go on.
func (e *Election) Resign(ctx context.Context) error {
	if err := rt.Usable(ctx, e.keys.Name, e.client); err != nil {
		return e.errorf("resign", err)
	}
	e.mu.Lock()
	id := e.id
	e.mu.Unlock()
	if id == "" {
		return e.errorf("resign", lockerr.ErrNotHeld)
	}
	if err := e.resign(ctx, id); err != nil {
		return e.errorf("resign", err)
	}
	return nil
}

// resign releases owner id's leadership and deletes its record.
// It is a clean-up (see wait.Cleanup): it returns by ctx's end, and goes
// on in the background if ctx ends first.
func (e *Election) resign(ctx context.Context, id string) error {
	_, err := wait.Cleanup(ctx, e.client, func(ctx context.Context) (struct{}, error) {
		err := e.m.Unlock(owner.NewContext(ctx, id))
		perr := e.cfg.Sender(e.client).Send(ctx, scripts.ElectionResign{Election: e.keys, Owner: id}.Request()).Err()
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, perr
	})
	return err
}

// Proclaim replaces the leader's value, without an election: observers see
// the change. It returns an error matching latchkey.ErrNotHeld if this
// handle does not lead.
func (e *Election) Proclaim(ctx context.Context, value string) error {
	if err := rt.Usable(ctx, e.keys.Name, e.client); err != nil {
		return e.errorf("proclaim", err)
	}
	e.mu.Lock()
	id, term := e.id, e.term
	e.mu.Unlock()
	if id == "" {
		return e.errorf("proclaim", lockerr.ErrNotHeld)
	}
	if err := e.proclaim(ctx, id, value, term); err != nil {
		return e.errorf("proclaim", err)
	}
	return nil
}

// proclaim records owner id's value and term, if it holds the lock.
func (e *Election) proclaim(ctx context.Context, id, value string, term int64) error {
	req := scripts.ElectionProclaim{Election: e.keys, Owner: id, Value: value, Term: term}
	n, err := scripts.Int(e.cfg.Sender(e.client).Send(ctx, req.Request()).Cmd)
	switch {
	case err != nil:
		return err
	case n != 1:
		return lockerr.ErrNotHeld
	}
	return nil
}

// Term returns the term of this handle's leadership: the fencing token of
// its hold, which strictly increases with every leadership of the
// election, by any handle or process. It returns 0 if the handle does not
// lead; the context Campaign returned keeps its term (see TermOf). Give it
// to every write the leader makes, so that a store can refuse a leader
// that lost the leadership without knowing it yet.
func (e *Election) Term() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.term
}

// Deadline returns when this handle's leadership stops being known valid:
// its latest acquisition or renewal sent, plus the lease, less a drift
// allowance (see mutex.Mutex.Deadline). The election's lock expires no
// sooner on the server. Deadline reads the local clock only; it returns
// the zero time if the handle does not lead, including once its
// leadership was lost or resigned.
//
// A leader that was paused (a GC pause, a stopped process, a VM
// migration) learns nothing until it runs again, and its leadership may
// have ended long before the context Campaign returned is cancelled: ask
// Deadline right before each write the leadership guards, skip the write
// if it has passed or is too close, and give the write the term, which a
// store can check, for the case where even that came too late.
func (e *Election) Deadline() time.Time {
	e.mu.Lock()
	leads := e.id != ""
	e.mu.Unlock()
	if !leads {
		return time.Time{}
	}
	return e.m.Deadline()
}

// termKey is the key of a leadership context's term.
type termKey struct{}

// TermOf returns the term of the leadership whose context Campaign
// returned, ctx or a context derived from it, and whether ctx is one; it
// keeps the term after the leadership ended, when Term returns 0.
func TermOf(ctx context.Context) (int64, bool) {
	t, ok := ctx.Value(termKey{}).(int64)
	return t, ok
}

func (e *Election) errorf(op string, err error) error {
	return fmt.Errorf("election: %s %s: %w", op, e.keys.Name, err)
}
