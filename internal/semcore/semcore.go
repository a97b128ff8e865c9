// Package semcore is the counting semaphore that packages semaphore and
// permitsemaphore are thin layers over: the waiter queue, the wait, the
// give-up ladder, the grants and their purge, the changes of the count and
// the semaphore's lifecycle. What differs between the two is what a hold
// is, a count of permits or permits with ids and leases: each package
// keeps its own Acquire and Release, and its scripts (Core.Leases).
package semcore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Core is one handle on a semaphore.
type Core struct {
	Client redis.UniversalClient
	Pkg    string // "semaphore" or "permitsemaphore": errors and events name it
	Name   string
	Keys   keys.Semaphore
	Cfg    lockopt.Base
	// Leases: a permit semaphore (the pes_* scripts), whose permits are
	// held under their ids, with leases; else a semaphore (sem_*), whose
	// count is all there is.
	Leases bool
}

// New returns the core of a handle of package pkg on the semaphore called
// name, a permit semaphore if leases.
func New(client redis.UniversalClient, pkg, name string, leases bool, cfg lockopt.Base) *Core {
	keys.MustClient(pkg, client)
	return &Core{Client: client, Pkg: pkg, Name: name, Keys: keys.SemaphoreOf(name), Cfg: cfg, Leases: leases}
}

// Errorf returns err wrapped with the package and what the call did, as
// format says, on the semaphore.
func (c *Core) Errorf(err error, format string, a ...any) error {
	return fmt.Errorf("%s: %s %s: %w", c.Pkg, fmt.Sprintf(format, a...), c.Name, err)
}

// Sender returns the handle's send path.
func (c *Core) Sender() rt.Sender { return c.Cfg.Sender(c.Client) }

// Record returns a fresh request record.
func (c *Core) Record() string { return keys.NewOnce(c.Name) }

// Change sends req, a change recorded against its request that may grant
// permits to waiters, again through transient faults, and returns the
// first integer of its reply, {v, ..., handed}, and the reply; a grant it
// made is noted (see granted). A change beyond lockopt.MaxPermits is an
// error matching lockerr.ErrInvalidPermits.
func (c *Core) Change(ctx context.Context, req scripts.Request) (int64, rt.Reply, error) {
	return c.change(ctx, req, false)
}

// Release is Change for a release, whose script first gives back the
// grants whose grace is over: the work of a purge due before it began,
// which is then dropped (see rt.Book.Refreshed). A client that keeps
// releasing on a busy semaphore sends no purge of its own.
func (c *Core) Release(ctx context.Context, req scripts.Request) (int64, rt.Reply, error) {
	return c.change(ctx, req, true)
}

func (c *Core) change(ctx context.Context, req scripts.Request, release bool) (int64, rt.Reply, error) {
	start := time.Now()
	rep, _ := c.Sender().Resend(ctx, req)
	if release && rep.Err() == nil {
		// Before granted: a grant of this release arms a purge of its own.
		rt.Of(c.Client).Parked().Refreshed(c.purgeKey(), start)
	}
	v, err := c.handed(rep)
	return v, rep, lockopt.PermitsError(err)
}

// handed decodes rep, the reply {v, ..., handed} of a script that may
// grant permits to waiters, and returns v; a grant made, its purge is due
// after the grace.
func (c *Core) handed(rep rt.Reply) (int64, error) {
	v, handed, err := wait.Handed(rep.Cmd)
	if handed {
		c.granted()
	}
	return v, err
}

// Permits granted to a waiter that never takes them are off the count (a
// semaphore's) or held with a lease of the grace (a permit semaphore's)
// until a call finds their grace over and gives them back. So that they
// are never parked, the client whose call granted them makes that call
// once their grace is over, and the client of a waiter that gave up hands
// back what it may hold; Close does both at once (see rt.Book).

// granted notes that a call of this client granted permits: the purge
// runs once their grace is over.
func (c *Core) granted() {
	rt.Of(c.Client).Parked().Granted(c.purgeKey(), handoff.Grace, c.purge)
}

// purgeKey is the semaphore's key in the client's Book.
func (c *Core) purgeKey() string { return c.Pkg + ":" + c.Name }

// purge gives back the permits of grants whose grace is over, and hands
// them to the waiters at the head of the queue. It reports whether it
// granted some anew. A permit semaphore's count does it, taking back the
// permits whose lease ended, and a grant's lease is its grace.
func (c *Core) purge(ctx context.Context) (bool, error) {
	if c.Leases {
		_, _, err := c.count(ctx)
		return false, err
	}
	vs, err := scripts.Ints(c.Sender().Send(ctx, scripts.SemRestock{Sem: c.Keys}.Request()).Cmd)
	return err == nil && len(vs) > 1 && vs[1] == 1, err
}

// Count returns the permits available now, and, for a permit semaphore,
// those held, after returning the expired ones to the pool.
func (c *Core) Count(ctx context.Context) (available, held int64, err error) {
	if err = rt.Usable(ctx, c.Name, c.Client); err == nil {
		available, held, err = c.count(ctx)
	}
	if err != nil {
		return 0, 0, c.Errorf(err, "permits of")
	}
	return available, held, nil
}

func (c *Core) count(ctx context.Context) (int64, int64, error) {
	if !c.Leases {
		v, err := scripts.Int(c.Sender().Read(ctx, scripts.SemCount{Sem: c.Keys}.Request()))
		return v, 0, err
	}
	vs, err := scripts.Ints(c.Sender().Read(ctx, scripts.PesCount{Sem: c.Keys}.Request()))
	if err == nil && len(vs) != 2 {
		err = fmt.Errorf("latchkey: script reply: want 2 integers, got %d", len(vs))
	}
	if err != nil {
		return 0, 0, err
	}
	return vs[0], vs[1], nil
}

// dequeue takes the queue entry of a call that gave up out of the queue,
// giving back permits granted to it and not taken, through the call's
// send path snd; ear is how long its Hub may listen on Redisson's channel
// after it left.
func (c *Core) dequeue(ctx context.Context, snd rt.Sender, entry string, ear time.Duration) error {
	d := scripts.SemDequeue{Sem: c.Keys, Entry: entry, Ear: ear}
	req := d.Request()
	if c.Leases {
		req = scripts.PesDequeue(d).Request()
	}
	_, err := c.handed(snd.Send(ctx, req))
	return err
}
