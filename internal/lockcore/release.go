package lockcore

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

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

// Unlock releases one hold: the owner's carried by ctx, else the handle's
// current plain hold. The release is a clean-up (see wait.Cleanup): an
// ended ctx never strands a hold.
func (l *Lock) Unlock(ctx context.Context) error {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return l.errorf("unlock", err)
	}
	_, err := wait.Cleanup(ctx, l.Client, func(ctx context.Context) (struct{}, error) { return struct{}{}, l.unlock(ctx) })
	if err != nil {
		return l.errorf("unlock", err)
	}
	return nil
}

// unlock is Unlock's clean-up.
func (l *Lock) unlock(ctx context.Context) error {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		var ok bool
		if id, ok = l.Holds.ClaimPlain(hold.Any); !ok {
			return lockerr.ErrNotHeld
		}
	}
	// An owner whose hold this handle saw lost is not told otherwise, but
	// what is left of its hold on the server (a renewal that applied
	// although its answer was lost) is released all the same.
	lost := reentrant && l.Holds.WasLost(id)
	if reentrant {
		l.Holds.Claim(id)
	}
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
		return err
	case res < 0:
		l.record(id, res)
		return lockerr.ErrNotHeld
	case err != nil:
		l.record(id, res)
		return fmt.Errorf("released on the master: %w", err)
	}
	l.record(id, res)
	return nil
}

// releaseOnce runs the release: -1 not held, 0 still held, 1 released. An
// error matching ErrNotReplicated comes with the answer of a release that
// the master applied but no replica acknowledged.
func (l *Lock) releaseOnce(ctx context.Context, id string, reentrant bool) (int64, error) {
	req := keys.NewOnce(l.Name)
	var rep rt.Reply
	err := rt.Retry(ctx, l.Client, func(ctx context.Context) error {
		rep = l.Proto.Release(ctx, id, reentrant, req) // recorded: safe to resend
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
// held. Like Unlock, it is sent detached from ctx.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return false, l.errorf("force unlock", err)
	}
	held, err := wait.Cleanup(ctx, l.Client, func(ctx context.Context) (bool, error) {
		n, err := scripts.Int(l.Proto.Force(ctx).Cmd)
		return n == 1, err
	})
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	return held, nil
}

// Delete deletes every key of the lock, Redisson's and latchkey's, unless
// someone holds it (lockerr.ErrHeld), and reports whether any existed.
func (l *Lock) Delete(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, l.Name, l.Client); err != nil {
		return false, l.errorf("delete", err)
	}
	n, err := scripts.Int(l.Proto.Delete(ctx).Cmd)
	switch {
	case err != nil:
		return false, l.errorf("delete", err)
	case n < 0:
		return false, l.errorf("delete", lockerr.ErrHeld)
	}
	return n == 1, nil
}
