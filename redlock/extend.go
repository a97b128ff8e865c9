package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockcore"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/owner"
)

// Extend sets the lease of the caller's hold of m to d on every node at
// once, as redsync's Extend does: the hold of the owner carried by ctx, or
// without one the handle's current plain hold. It keeps the validity rules
// of an acquisition: Extend succeeds only if a quorum of nodes extended the
// hold and some of d is left after the time that took and the drift
// allowance; Deadline then moves to d - elapsed - drift after the nodes
// were asked. It never acquires: if too few nodes still have the hold for
// a quorum, Extend returns an error matching latchkey.ErrNotHeld and the
// hold is reported lost through Done, Err and LockContext. If too few nodes
// answered to tell, it returns a *QuorumError, and Deadline only moves
// earlier, since the nodes that answered may have shortened it.
//
// Only a Mutex made with WithLease is extended; with the watchdog, which
// sets its own lease at every renewal, Extend returns an error and changes
// nothing. A d below latchkey.MinLease gets an error matching
// latchkey.ErrInvalidLease.
func (m *Mutex) Extend(ctx context.Context, d time.Duration) error {
	if err := rt.Usable(ctx, m.name, m.clients...); err != nil {
		return fmt.Errorf("redlock: extend %s: %w", m.name, err)
	}
	if err := lockopt.CheckLease(d); err != nil {
		return fmt.Errorf("redlock: extend %s: %w", m.name, err)
	}
	if m.cfg.Fixed == 0 {
		return fmt.Errorf("redlock: extend %s: %w", m.name, lockcore.ErrWatched)
	}
	id, ok := owner.FromContext(ctx)
	if !ok {
		id, _ = m.holds.CurrentPlain(hold.Any)
	}
	h := m.holds.Get(id)
	if h == nil {
		return fmt.Errorf("redlock: extend %s: %w", m.name, lockerr.ErrNotHeld)
	}
	k := h.Keeping().(*held)
	sent := time.Now()
	rs := m.fanout(ctx, m.renewal(d, id), nil)
	renewed, failed := count(rs, 1)
	gone := len(rs) - renewed - failed
	quorum := renewed >= m.quorum
	switch {
	case quorum && time.Now().Before(lease.ValidUntil(sent, d)):
		k.Extend(sent, d, true)
		return nil
	case len(rs)-gone < m.quorum:
		k.lose(fmt.Errorf("redlock: %s: %w: %w", m.name, lockerr.ErrLost, m.quorumError("extend", renewed, rs)))
		return fmt.Errorf("redlock: extend %s: %w: found on %d of %d nodes, %d needed",
			m.name, lockerr.ErrNotHeld, renewed, len(m.clients), m.quorum)
	}
	k.Extend(sent, d, false) // the nodes that answered may have applied it
	if ctx.Err() != nil {
		return fmt.Errorf("redlock: extend %s: %w", m.name, ctx.Err())
	}
	if quorum {
		return fmt.Errorf("redlock: extend %s: the quorum took longer than the %v lease less its drift", m.name, d)
	}
	return fmt.Errorf("redlock: extend %s: %w", m.name, m.quorumError("extend", renewed, rs))
}
