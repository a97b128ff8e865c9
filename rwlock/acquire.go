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
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		// A fresh id per plain acquisition: goroutines sharing the handle
		// behave as with a shared sync.RWMutex, and a lost reply can be
		// undone without touching another goroutine's hold.
		id = owner.New()
	}
	ttl := scripts.Ms(rw.cfg.TTL())
	script, args := readAcquireScript, []any{ttl, id, field(id, write), flag(reentrant), "", scripts.Ms(epochLife)}
	var mark *marking // a writer's entry in the writers' marker
	if s == write {
		mark = newMarking(budget)
		script, args = writeAcquireScript, []any{ttl, field(id, write), id, mark.entry, scripts.Ms(mark.life), "0"}
	}
	ks := []string{rw.name, rw.timeoutPrefix(id), rw.layout.Writers}
	if s == read {
		ks = append(ks, rw.layout.Epoch)
	} else {
		ks = append(ks, rw.layout.Token)
	}
	hadLocal := rw.holds.Get(field(id, s)) != nil
	// One request for the whole wait: a resend of an attempt that took the
	// hold finds its record, whatever attempt it belongs to.
	w := rt.Write{Keys: ks, Args: args, Once: keys.Once(rw.name, owner.New()), Sync: rw.cfg.Sync.Timeout()}
	var token int64 // a write hold's fencing token
	m := acquire.New(acquire.Steps{
		Client: rw.client,
		Send: func(ctx context.Context) (acquire.Answer, error) {
			if mark != nil {
				w.Args[5] = flag(mark.sent)
				mark.sent = mark.life > 0
			}
			rep := rt.Exec(ctx, rw.client, script, w)
			res, err := scripts.Ints(rep.Cmd)
			switch {
			case err != nil:
				return acquire.Answer{}, err
			case len(res) < 2:
				return acquire.Answer{}, fmt.Errorf("latchkey: script reply: want 2 or 3 integers, got %d", len(res))
			case res[0] == 1:
				if len(res) > 2 {
					token = res[2]
				}
				return acquire.Answer{Granted: true, Reply: rep}, nil
			case res[0] < 0:
				return acquire.Answer{Refused: fmt.Errorf("%w: the owner holds a read lock, and a writer waits for every reader",
					lockerr.ErrWouldDeadlock)}, nil
			}
			if len(res) > 2 && w.Args[4] == "" {
				// Held back: a write release from now on lets this call
				// in even if another writer waits by then.
				w.Args[4] = strconv.FormatInt(res[2], 10)
			}
			return acquire.Answer{Retry: mark.bound(scripts.Millis(res[1])), Reply: rep}, nil
		},
		Undo:    func(ctx context.Context) { _, _ = rw.releaseOnce(ctx, id, s) },
		Lease:   rw.cfg.TTL(),
		Restart: func() { w.Once = keys.Once(rw.name, owner.New()) },
		Abandon: func(ctx context.Context, unsure bool) {
			if mark != nil && mark.sent {
				rw.withdraw(ctx, mark.entry)
			}
			switch {
			case !unsure:
			case !reentrant && !hadLocal:
				_, _ = rw.release(ctx, id, s) // the grant may have landed after we gave up
			default:
				// An owner's acquisition that may have counted: its record
				// says, and a count the caller was told failed is taken
				// back, so that the owner's counts here and on the server
				// agree.
				_, applied, err := rt.Resolve(ctx, rw.client, script, w)
				switch {
				case err != nil:
					rw.holds.Uncertain(field(id, s))
				case applied:
					_, _ = rw.releaseOnce(ctx, id, s)
				}
			}
		},
	})
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Client: rw.client,
		Event:  rt.Event{Kind: "rwlock", Name: rw.name, Reentered: reentrant && hadLocal},
		Hub:    rw.cfg.HubFor(rw.client),
		Wake:   wait.Channel{Name: rw.layout.Channel, Policy: wakePolicy, Need: need(s)},
		Call:   m,
	})
	if err != nil {
		return nil, false, fmt.Errorf("rwlock: %s lock %s: %w", s, rw.name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return rw.acquired(id, s, !reentrant, token, m.Since()), true, nil
}
