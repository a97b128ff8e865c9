package semcore

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
)

// The changes of the count and the semaphore's lifecycle, as both
// packages document them.

// TrySetPermits sets the count to n if the semaphore has none, and reports
// whether it did.
func (c *Core) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	v, err := c.set(ctx, scripts.TrySet, n, 0, 0)
	return v == 1, err
}

// TrySetPermitsTTL is TrySetPermits for a semaphore that lives ttl.
func (c *Core) TrySetPermitsTTL(ctx context.Context, n int64, ttl time.Duration) (bool, error) {
	if err := lockopt.CheckLease(ttl); err != nil {
		return false, fmt.Errorf("%s: set %d permits of %s for %v: %w", c.Pkg, n, c.Name, ttl, err)
	}
	v, err := c.set(ctx, scripts.TrySet, n, 0, ttl)
	return v == 1, err
}

// SetPermits sets the count to n.
func (c *Core) SetPermits(ctx context.Context, n int64) error {
	_, err := c.set(ctx, scripts.SetTo, n, 0, 0)
	return err
}

// AddPermits adds n, which may be negative, to the count.
func (c *Core) AddPermits(ctx context.Context, n int64) error {
	_, err := c.set(ctx, scripts.SetAdd, n, -lockopt.MaxPermits, 0)
	return err
}

// set changes the count, by n of at least least, as change says, and
// returns the first integer of the answer: for TrySet, 1 if it set the
// count. A change applied on the master that no replica acknowledged
// comes with that error.
func (c *Core) set(ctx context.Context, change string, n, least int64, ttl time.Duration) (int64, error) {
	err := lockopt.CheckPermits(n, least)
	if err == nil {
		err = rt.Usable(ctx, c.Name, c.Client)
	}
	var v int64
	if err == nil {
		set := scripts.SemSet{Sem: c.Keys, Change: change, Permits: n, TTL: ttl, Record: c.Record()}
		req := set.Request()
		if c.Leases {
			req = scripts.PesSet(set).Request()
		}
		var rep rt.Reply
		if v, rep, err = c.Change(ctx, req); err == nil && (change != scripts.TrySet || v == 1) {
			err = rep.SyncErr()
		}
	}
	if err != nil {
		return v, c.Errorf(err, "%s %d permits of", change, n)
	}
	return v, nil
}

// Delete deletes the semaphore, and every key beside it, waking every
// waiter, and reports whether it existed.
func (c *Core) Delete(ctx context.Context) (bool, error) {
	d := scripts.SemDelete{Sem: c.Keys, Record: c.Record()}
	req := d.Request()
	if c.Leases {
		req = scripts.PesDelete(d).Request()
	}
	return c.applied(ctx, "delete", req)
}

// Expire makes the semaphore expire d from now, and reports whether it
// existed.
func (c *Core) Expire(ctx context.Context, d time.Duration) (bool, error) {
	if err := lockopt.CheckLease(d); err != nil {
		return false, fmt.Errorf("%s: expire %s in %v: %w", c.Pkg, c.Name, d, err)
	}
	return c.applied(ctx, "expire", scripts.SemExpire{Sem: c.Keys, Leases: c.Leases, In: d}.Request())
}

// applied sends req, a write safe to send twice, through transient faults
// and reports whether it answered 1; then one that no replica acknowledged
// comes with that error.
func (c *Core) applied(ctx context.Context, what string, req scripts.Request) (bool, error) {
	err := rt.Usable(ctx, c.Name, c.Client)
	var v int64
	if err == nil {
		rep, _ := c.Sender().Resend(ctx, req)
		if v, err = scripts.Int(rep.Cmd); err == nil && v == 1 {
			err = rep.SyncErr() // applied on the master all the same
		}
	}
	if err != nil {
		return v == 1, c.Errorf(err, "%s", what)
	}
	return v == 1, nil
}

// TTL returns how long the semaphore lives: 0 if it does not exist, and a
// negative duration if it does not expire.
func (c *Core) TTL(ctx context.Context) (time.Duration, error) {
	err := rt.Usable(ctx, c.Name, c.Client)
	var ms int64
	if err == nil {
		ms, err = scripts.Int(c.Sender().Read(ctx, scripts.SemTTL{Sem: c.Keys, Leases: c.Leases}.Request()))
	}
	switch {
	case err != nil:
		return 0, c.Errorf(err, "TTL of")
	case ms == -2:
		return 0, nil
	}
	return scripts.Millis(ms), nil
}
