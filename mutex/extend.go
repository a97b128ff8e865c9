package mutex

import (
	"context"
	"time"
)

// Extend sets the lease of the caller's hold of m to d from now, as
// redislock's Refresh does: the hold of the owner carried by ctx, or
// without one the handle's current plain hold. It never acquires: if the
// hold is gone (expired, deleted, force-unlocked), Extend returns an error
// matching latchkey.ErrNotHeld, and the hold is reported lost through Done,
// Err and LockContext. A d below latchkey.MinLease gets an error matching
// latchkey.ErrInvalidLease. Only a Mutex made with WithLease is extended;
// with the watchdog, which sets its own lease at every renewal, Extend
// returns an error and changes nothing. A later Lock by the same owner
// sets the lease back to WithLease's.
//
// An Extend that fails otherwise (ctx ended, a Redis error, an error
// matching latchkey.ErrNotReplicated) may or may not have applied: the
// hold is then known valid only as long as both outcomes allow, which
// Deadline reports.
func (m *Mutex) Extend(ctx context.Context, d time.Duration) error { return m.l.Extend(ctx, d) }

// Deadline returns when the current hold of m stops being known valid: its
// latest acquisition, renewal or extension sent, plus the lease, less a
// drift allowance of a hundredth of the lease and 2ms. The lock's key
// expires no sooner on the server. Deadline reads the local clock only; it
// returns the zero time if m is not held.
//
// A holder that was paused (a GC pause, a stopped process, a VM
// migration) learns nothing until it runs again, and may find its lock
// lost long after Deadline passed: ask Deadline right before the work the
// lock guards, and give that work the fencing token (see Token), which a
// resource can check against the last one it saw, for the case where even
// that came too late. Done closes when the hold is declared lost, no later
// than at Deadline.
func (m *Mutex) Deadline() time.Time { return m.l.Deadline() }
