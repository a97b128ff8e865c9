package rwlock

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

func (rw *RWMutex) unlock(ctx context.Context, s side) error {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	_, err := wait.Cleanup(ctx, rw.client, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, rw.unlockDetached(ctx, s)
	})
	if wait.Pending(err) {
		return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	return err
}

// unlockDetached is unlock's clean-up (see wait.Cleanup).
func (rw *RWMutex) unlockDetached(ctx context.Context, s side) error {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		var ok bool
		if id, ok = rw.holds.ClaimPlain(int(s)); !ok {
			return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, lockerr.ErrNotHeld)
		}
	}
	// An owner whose hold this handle saw lost is not told otherwise, but
	// what is left of it on the server is released all the same.
	lost := reentrant && rw.holds.WasLost(field(id, s))
	if reentrant {
		rw.holds.Claim(field(id, s))
	}
	res, err := rw.releaseOnce(ctx, rw.cfg.Sender(rw.client), id, s)
	if lost && (err == nil || errors.Is(err, lockerr.ErrNotReplicated)) {
		res, err = -1, nil
	}
	switch {
	case err != nil && !errors.Is(err, lockerr.ErrNotReplicated):
		// Whether the release applied is unknown. Either way this hold is
		// over for the handle, as for Redisson: the watchdog stops, and a
		// release that did not apply ends with the lease on the server.
		rw.holds.Abandoned(field(id, s))
		return err
	case res == -1:
		rw.released(id, s, res)
		return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, lockerr.ErrNotHeld)
	}
	rw.released(id, s, res)
	return err
}

// releaseOnce runs the release script for owner id's hold on side s: -1
// not held, -2 released but the owner's other read holds had expired, 0
// the owner's last hold of that side released, n > 0 holds left. An error
// matching ErrNotReplicated comes with the answer of a release that the
// master applied but no replica acknowledged.
func (rw *RWMutex) releaseOnce(ctx context.Context, snd rt.Sender, id string, s side) (int64, error) {
	// Recorded, so safe to resend.
	rep, err := snd.Resend(ctx, scripts.RWRelease{Lock: rw.layout, Owner: id, Write: s == write,
		Record: keys.NewOnce(rw.name)}.Request())
	if err != nil {
		return 0, fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	res, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	if err := rep.SyncErr(); err != nil && res != -1 {
		return res, fmt.Errorf("rwlock: %s unlock %s: released on the master: %w", s, rw.name, err)
	}
	return res, nil
}

// ForceUnlock deletes the lock whoever holds it, readers and writer alike,
// and reports whether it was held. It publishes Redisson's write-unlock
// message, which wakes every waiting reader and writer, latchkey's and
// Redisson's alike. A latchkey handle that held the lock is told within
// about a second, as it is of a Redisson client's forceUnlock: its hold's
// Done closes, and Err says it was force-unlocked. (Redisson's
// readLock().forceUnlock() and writeLock().forceUnlock() delete the lock
// only in their own mode.)
//
// ForceUnlock returns by ctx's deadline, but its requests are not cut
// short by ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (rw *RWMutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return false, fmt.Errorf("rwlock: force unlock %s: %w", rw.name, err)
	}
	held, err := wait.Cleanup(ctx, rw.client, func(ctx context.Context) (bool, error) {
		l := rw.layout
		n, err := scripts.Int(rw.cfg.Sender(rw.client).Send(ctx, scripts.LockForceRelease{
			Name: l.Name, Channel: l.Channel, Forced: l.Forced, Message: "1"}.Request()).Cmd)
		return n == 1, err
	})
	if err != nil {
		return false, fmt.Errorf("rwlock: force unlock %s: %w", rw.name, err)
	}
	return held, nil
}

// Delete deletes every key of the lock, Redisson's and latchkey's (the
// waiting writers' marks, the epoch, the write holds' fencing counter), if
// nobody holds it, for reading or writing, and reports whether any
// existed (Redisson's delete). A held lock is left as it is, and Delete
// returns an error matching latchkey.ErrHeld: ForceUnlock releases every
// hold first. Tokens keep increasing after the counter is deleted.
func (rw *RWMutex) Delete(ctx context.Context) (bool, error) {
	if err := rt.Usable(ctx, rw.name, rw.client); err != nil {
		return false, fmt.Errorf("rwlock: delete %s: %w", rw.name, err)
	}
	l := rw.layout
	n, err := scripts.Int(rw.cfg.Sender(rw.client).Send(ctx, scripts.LockDelete{
		Name: l.Name, Channel: l.Channel, Beside: []string{l.Writers, l.Epoch, l.Token}, Message: "1"}.Request()).Cmd)
	switch {
	case err != nil:
		return false, fmt.Errorf("rwlock: delete %s: %w", rw.name, err)
	case n < 0:
		return false, fmt.Errorf("rwlock: delete %s: %w", rw.name, lockerr.ErrHeld)
	}
	return n == 1, nil
}
