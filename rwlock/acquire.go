package rwlock

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/acquire"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

func (rw *RWMutex) lock(ctx context.Context, budget time.Duration, s side) (bool, error) {
	_, ok, err := rw.take(ctx, budget, s)
	return ok, err
}

// take acquires a hold on side s within budget and returns it.
func (rw *RWMutex) take(ctx context.Context, budget time.Duration, s side) (*hold.Hold, bool, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return nil, false, fmt.Errorf("rwlock: %s lock %s: %w", s, rw.name, err)
	}
	a := &acquisition{rw: rw, snd: rw.cfg.Sender(rw.client), s: s, record: keys.NewOnce(rw.name)}
	a.id, a.reentrant = owner.FromContext(ctx)
	if !a.reentrant {
		// A fresh id per plain acquisition: goroutines sharing the handle
		// behave as with a shared sync.RWMutex, and a lost reply can be
		// undone without touching another goroutine's hold.
		a.id = owner.New()
	}
	if s == write {
		a.mark = newMarking(budget)
	}
	hadLocal := rw.holds.Get(field(a.id, s)) != nil
	m := acquire.New(a.steps())
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Client: rw.client,
		Event:  rt.Event{Kind: "rwlock", Name: rw.name, Reentered: a.reentrant && hadLocal},
		Hub:    a.snd.Hub(),
		Wake:   wait.Channel{Name: rw.layout.Channel, Policy: wakePolicy, Need: need(s)},
		Call:   m,
	})
	if err != nil {
		return nil, false, fmt.Errorf("rwlock: %s lock %s: %w", s, rw.name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return rw.acquired(a.id, s, !a.reentrant, a.token, m.Since()), true, nil
}

// An acquisition is one lock call on side s for owner id. Its attempts
// share one request record: a resend of an attempt that took the hold
// finds it, whatever attempt it belongs to.
type acquisition struct {
	rw        *RWMutex
	snd       rt.Sender
	id        string
	reentrant bool // id came from ctx: it may hold through other handles
	s         side
	record    string
	mark      *marking // a writer's entry in the writers' marker
	epoch     string   // the epoch a reader was first held back in, or ""
	token     int64    // a write hold's fencing token
}

// request is the acquisition's request as its next attempt sends it.
func (a *acquisition) request() scripts.Request {
	rw := a.rw
	if a.s == read {
		return scripts.RWReadAcquire{Lock: rw.layout, Owner: a.id, Lease: rw.cfg.TTL(), Reentrant: a.reentrant,
			Epoch: a.epoch, EpochLife: epochLife, Record: a.record}.Request()
	}
	return scripts.RWWriteAcquire{Lock: rw.layout, Owner: a.id, Lease: rw.cfg.TTL(), Entry: a.mark.entry,
		Life: a.mark.life, Marked: a.mark.sent, Record: a.record}.Request()
}

// steps are what the acquisition means to the state machine, its give-up
// ladder included: a writer that may have left its entry in the marker
// withdraws it; an unanswered attempt by a fresh id, which holds nothing
// else, is released, while an owner's asks its record whether it counted,
// and takes the count back if it did, so that the owner's counts here and
// on the server agree.
func (a *acquisition) steps() acquire.Steps {
	st := acquire.Steps{
		Client:  a.rw.client,
		Send:    a.send,
		Undo:    func(ctx context.Context) { _, _ = a.rw.releaseOnce(ctx, a.snd, a.id, a.s) },
		Lease:   a.rw.cfg.TTL(),
		Restart: func() { a.record = keys.NewOnce(a.rw.name) },
	}
	if a.mark != nil && a.mark.life > 0 {
		st.Leave = func(ctx context.Context) error {
			if !a.mark.sent {
				return nil
			}
			return a.rw.withdraw(ctx, a.snd, a.mark.entry)
		}
	}
	if a.reentrant {
		st.Settle = func(ctx context.Context) (bool, error) {
			_, applied, err := a.snd.Resolve(ctx, a.request())
			return applied, err
		}
		st.Unsettled = func() { a.rw.holds.Uncertain(field(a.id, a.s)) }
	}
	return st
}

// send makes one attempt.
func (a *acquisition) send(ctx context.Context) (acquire.Answer, error) {
	req := a.request()
	if a.mark != nil {
		a.mark.sent = a.mark.life > 0
	}
	rep := a.snd.Send(ctx, req)
	res, err := scripts.Ints(rep.Cmd)
	switch {
	case err != nil:
		return acquire.Answer{}, err
	case len(res) < 2:
		return acquire.Answer{}, fmt.Errorf("latchkey: script reply: want 2 or 3 integers, got %d", len(res))
	case res[0] == 1:
		if len(res) > 2 {
			a.token = res[2]
		}
		return acquire.Answer{Granted: true, Reply: rep}, nil
	case res[0] < 0:
		return acquire.Answer{Refused: fmt.Errorf("%w: the owner holds a read lock, and a writer waits for every reader",
			lockerr.ErrWouldDeadlock)}, nil
	}
	if len(res) > 2 && a.epoch == "" {
		// Held back: a write release from now on lets this call in even
		// if another writer waits by then.
		a.epoch = strconv.FormatInt(res[2], 10)
	}
	return acquire.Answer{Retry: a.mark.bound(scripts.Millis(res[1])), Reply: rep}, nil
}
