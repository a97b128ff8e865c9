package permitsemaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
)

// renewal is the watchdog's renewal of permits kept alive: KEYS[i] the
// leases zset of item i's semaphore, ARGV[i+2] the permit's raw id, its new
// lease ending the client's clock (ARGV[2]) plus the lease.
var renewal = &lease.Kind{Script: "pes_renew", KeysPerItem: 1, ArgsPerItem: 1, Clock: true}

// errKept is Extend's answer on a permit kept alive, whose renewals would
// set the lease back to theirs.
var errKept = errors.New("the watchdog keeps this permit alive: its renewals set its lease")

// KeepAlive keeps p held until it is released: the watchdog of p's client,
// which renews its locks, resets p's lease to its full length every third
// of it, in the same batched calls (see the latchkey package doc on the
// watchdog). A holder that dies stops renewing, and its permit returns to
// the pool within one lease, as one not kept alive does; so a short lease
// keeps a dead holder's permit away briefly, while work under the permit
// may take as long as it needs. KeepAlive does no I/O and returns at once;
// calling it again does nothing.
//
// Loss is never silent: if a renewal finds p gone (its lease ran out, it
// was released by its id elsewhere, or the semaphore was deleted or
// expired) or renewals fail until p's lease may have run out, p's Done
// channel closes and Err returns an error matching latchkey.ErrLost that
// says why. Release then returns an error matching latchkey.ErrNotHeld.
// Release stops the renewals; Extend is refused while they go on.
//
// KeepAlive returns an error matching latchkey.ErrInvalidLease if p is
// permanent (Forever: there is no lease to renew), and one matching
// latchkey.ErrNotHeld if p was released or lost, or its lease may have run
// out already.
func (p *Permit) KeepAlive() error {
	if p == nil {
		return fmt.Errorf("permitsemaphore: keep a nil permit alive: %w", lockerr.ErrNotHeld)
	}
	fail := func(err error) error {
		return fmt.Errorf("permitsemaphore: keep permit %s of %s alive: %w", p.id, p.s.c.Name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d := time.Duration(p.lease)
	switch {
	case p.over:
		return fail(notHeld(p.err))
	case p.keep != nil:
		return nil
	case p.lease == Forever:
		return fail(fmt.Errorf("%w: a permanent permit has no lease to renew", lockerr.ErrInvalidLease))
	case !time.Now().Before(lease.ValidUntil(p.since, d)):
		return fail(fmt.Errorf("%w: its lease of %v may have run out", lockerr.ErrNotHeld, d))
	}
	raw, _ := rawID(p.id)
	w := hold.Watchdog{
		Client: p.s.c.Client, Kind: renewal, Lease: d, Sync: p.s.c.Cfg.Sync.Timeout(),
		Keys: func(string) []string { return []string{p.s.c.Keys.Leases} },
		Args: func(string) []any { return []any{raw} },
		What: rt.Event{Kind: "permitsemaphore", Name: p.s.c.Name},
	}
	// Lost is never called from Keep itself, which holds p.mu here.
	p.keep = w.Keep(p.id, p.since, func(err error) {
		p.end(fmt.Errorf("permitsemaphore: permit %s of %s: %w", p.id, p.s.c.Name, err))
	})
	p.s.kept.add(p)
	return nil
}

// notHeld is the error of a call on a permit that ended with err: released
// (nil) or lost.
func notHeld(err error) error {
	if err == nil {
		return fmt.Errorf("%w: released", lockerr.ErrNotHeld)
	}
	return fmt.Errorf("%w: %w", lockerr.ErrNotHeld, err)
}

// closed is the channel Done returns once a permit ended before anyone
// asked for it.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel that is closed when p ends as far as this process
// knows: released through p (or through its Semaphore by its id), or lost
// while kept alive (see KeepAlive); Err then tells which. A permit that is
// not kept alive is not watched: its lease running out closes nothing. A
// nil Permit's channel is closed.
func (p *Permit) Done() <-chan struct{} {
	if p == nil {
		return closed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		if p.over {
			return closed
		}
		p.done = make(chan struct{})
	}
	return p.done
}

// Err returns nil while p is held and after it was released; once p was
// lost (see KeepAlive) it returns an error matching latchkey.ErrLost that
// says why. A nil Permit's Err matches latchkey.ErrNotHeld.
func (p *Permit) Err() error {
	if p == nil {
		return fmt.Errorf("permitsemaphore: a nil permit: %w", lockerr.ErrNotHeld)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Context returns a copy of ctx that is cancelled when p ends (see Done):
// work done under the permit can watch it. When p is lost, context.Cause
// reports an error matching latchkey.ErrLost that says why.
func (p *Permit) Context(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	if p == nil {
		cancel(p.Err())
		return ctx
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		cancel(p.err)
	} else {
		p.cancels = append(p.cancels, cancel)
	}
	return ctx
}

// end ends p as far as this process knows, once: released (err nil) or
// lost. Its renewals, if any, stop.
func (p *Permit) end(err error) {
	p.mu.Lock()
	if p.over {
		p.mu.Unlock()
		return
	}
	p.over, p.err = true, err
	keep, cancels, done := p.keep, p.cancels, p.done
	p.keep, p.cancels = nil, nil
	p.mu.Unlock()
	if keep != nil {
		keep.Stop()
		p.s.kept.remove(p)
	}
	// The contexts first: whoever sees Done closed finds them cancelled.
	for _, cancel := range cancels {
		cancel(err)
	}
	if done != nil {
		close(done)
	}
}

// settle ends p after a release of it (alone, or all or none with others
// when alone is false) answered err.
func (p *Permit) settle(err error, alone bool) {
	switch {
	case err == nil, errors.Is(err, lockerr.ErrNotReplicated):
		p.end(nil)
	case errors.Is(err, lockerr.ErrNotHeld) && alone:
		p.end(fmt.Errorf("permitsemaphore: permit %s of %s: %w: found gone on release", p.id, p.s.c.Name, lockerr.ErrLost))
	case errors.Is(err, lockerr.ErrNotHeld):
		// All or none: none was released, and which were gone is not
		// known; the renewals of those kept alive will tell.
	default:
		// The release may not have applied: nothing renews p any more,
		// and it expires with its lease if it is still held.
		p.end(fmt.Errorf("permitsemaphore: permit %s of %s: %w: its release failed: %w", p.id, p.s.c.Name, lockerr.ErrLost, err))
	}
}

// kept is the set of permits kept alive through one Semaphore handle, by
// id, so that a release by id through the handle, or its Delete, ends them.
type kept struct {
	mu sync.Mutex
	m  map[string]*Permit
}

func (k *kept) add(p *Permit) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = make(map[string]*Permit)
	}
	k.m[p.id] = p
}

func (k *kept) remove(p *Permit) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m[p.id] == p {
		delete(k.m, p.id)
	}
}

// get returns the permits among ids that are kept alive.
func (k *kept) get(ids []string) []*Permit {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*Permit
	for _, id := range ids {
		if p := k.m[id]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// drop ends every permit kept alive, lost with err.
func (k *kept) drop(err error) {
	k.mu.Lock()
	ps := make([]*Permit, 0, len(k.m))
	for _, p := range k.m {
		ps = append(ps, p)
	}
	k.mu.Unlock()
	for _, p := range ps {
		p.end(fmt.Errorf("permitsemaphore: permit %s of %s: %w", p.id, p.s.c.Name, err))
	}
}
