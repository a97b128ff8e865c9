package permitsemaphore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
)

// A Permit is one permit taken from a Semaphore. Its ID releases it from
// any goroutine or process, also through Semaphore.Release. A Permit is
// safe for concurrent use. A nil *Permit holds nothing: its methods return
// an error matching latchkey.ErrNotHeld.
type Permit struct {
	s  *Semaphore
	id string // 32 lowercase hex characters

	mu sync.Mutex
	// The lease, as Acquire or Extend set it, by a request sent no sooner
	// than since.
	lease   Lease
	since   time.Time
	keep    hold.Keeping // while kept alive (see KeepAlive)
	over    bool         // released through p, or lost
	err     error        // why it ended: nil for a release
	done    chan struct{}
	cancels []context.CancelCauseFunc // of the contexts Context made
}

// newFirst returns a fresh random first permit id, as the 16 raw bytes
// Redisson stores: the ids of an acquisition's permits follow from it (see
// permitIDs), so that nothing in proportion to their number is made
// before the server grants them.
func newFirst() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return string(b[:]), nil
}

// permitIDs returns the raw ids of the n permits whose first id is first,
// as the scripts make them (each_id in scripts/fragment/pes.lua): they
// share its first 10 bytes, and their last 6, read as a big-endian number,
// count up from its own, modulo 2^48.
func permitIDs(first string, n int) []string {
	var b [16]byte
	copy(b[:], first)
	var base uint64
	for _, c := range b[10:] {
		base = base<<8 | uint64(c)
	}
	out := make([]string, n)
	for k := range out {
		v := base + uint64(k)
		for i := 15; i >= 10; i-- {
			b[i], v = byte(v), v>>8
		}
		out[k] = string(b[:])
	}
	return out
}

// newPermits returns the permits of s with the raw ids raw.
func newPermits(s *Semaphore, raw []string) []*Permit {
	ps := make([]*Permit, len(raw))
	for i, r := range raw {
		ps[i] = &Permit{s: s, id: hex.EncodeToString([]byte(r))}
	}
	return ps
}

// distinct returns ids without repeats, each permit once however its hex
// is spelt, and the raw ids of those, ready for ARGV. An id that names no
// permit is an error matching lockerr.ErrNotHeld.
func distinct(ids []string) ([]string, []string, error) {
	out, raw := ids[:0:0], make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		r, ok := rawID(id)
		if !ok {
			return nil, nil, fmt.Errorf("permit %q: %w", id, lockerr.ErrNotHeld)
		}
		if !seen[r] {
			seen[r] = true
			out, raw = append(out, id), append(raw, r)
		}
	}
	return out, raw, nil
}

// rawID returns the 16 bytes that id, 32 hex characters, stands for.
func rawID(id string) (string, bool) {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 16 {
		return "", false
	}
	return string(b), true
}

// ID returns the permit's id: 32 lowercase hex characters, as Redisson
// shows them. It returns "" for a nil Permit.
func (p *Permit) ID() string {
	if p == nil {
		return ""
	}
	return p.id
}

// Release gives the permit back, as Semaphore.Release does with its ID,
// and ends it: Done closes, and its renewals stop if it was kept alive.
// A permit that was lost (see KeepAlive) is given back too, should the
// server still hold it, and Release returns an error matching
// latchkey.ErrNotHeld all the same: its holder was told it lost it.
//
// Release returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (p *Permit) Release(ctx context.Context) error {
	if p == nil {
		return fmt.Errorf("permitsemaphore: release a nil permit: %w", lockerr.ErrNotHeld)
	}
	lost := p.Err()
	err := p.s.Release(ctx, p.id)
	if lost != nil {
		return fmt.Errorf("permitsemaphore: release permit %s of %s: %w", p.id, p.s.c.Name, notHeld(lost))
	}
	p.settle(err, true) // if not kept alive through p.s, which settled it
	return err
}

// Extend sets the permit's lease to end lease from now, or makes it
// permanent if lease is Forever. It returns an error matching
// latchkey.ErrNotHeld if the permit is no longer held (released, or its
// lease already ended), and one matching latchkey.ErrInvalidLease, changing
// nothing, if lease is refused (see Lease). A permit kept
// alive (see KeepAlive) is not extended: the watchdog sets its lease, and
// Extend returns an error and changes nothing.
func (p *Permit) Extend(ctx context.Context, lease Lease) error {
	if p == nil {
		return fmt.Errorf("permitsemaphore: extend a nil permit: %w", lockerr.ErrNotHeld)
	}
	p.mu.Lock()
	kept := p.keep != nil
	p.mu.Unlock()
	if kept {
		return fmt.Errorf("permitsemaphore: extend permit %s of %s: %w", p.id, p.s.c.Name, errKept)
	}
	sent := time.Now()
	ok, err := p.s.UpdateLeaseTime(ctx, p.id, lease)
	if ok {
		p.mu.Lock()
		p.lease, p.since = lease, sent
		p.mu.Unlock()
	} else if err == nil {
		err = fmt.Errorf("permitsemaphore: extend permit %s of %s: %w", p.id, p.s.c.Name, lockerr.ErrNotHeld)
	}
	return err
}

// Release gives back the permit with the given id and hands it to the
// waiter at the head of the queue if it satisfies it. It returns an error
// matching latchkey.ErrNotHeld, and changes nothing, if no such permit is
// held: the id is unknown, was released already, or its lease ended (the
// permit was then returned to the pool when it expired).
//
// Release returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (s *Semaphore) Release(ctx context.Context, id string) error {
	return s.ReleaseAll(ctx, id)
}

// ReleaseAll gives back the permits with the given ids, all or none: if
// one of them is not held it releases none and returns an error matching
// latchkey.ErrNotHeld (Redisson's release of a list). An id given more than
// once counts once: ReleaseAll(ctx, id, id) releases the permit and returns
// nil, as ReleaseAll(ctx, id) does. Permits kept alive through s (see
// Permit.KeepAlive) end when released: their renewals stop.
//
// ReleaseAll returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (s *Semaphore) ReleaseAll(ctx context.Context, ids ...string) error {
	if err := rt.Usable(ctx, s.c.Name, s.c.Client); err != nil {
		return fmt.Errorf("permitsemaphore: release %q of %s: %w", ids, s.c.Name, err)
	}
	ids, raw, err := distinct(ids)
	if err != nil {
		return fmt.Errorf("permitsemaphore: release %s: %w", s.c.Name, err)
	}
	if len(raw) == 0 {
		return nil
	}
	_, err = wait.Cleanup(ctx, s.c.Client, func(ctx context.Context) (struct{}, error) {
		n, err := s.release(ctx, true, raw...)
		if err == nil && n != int64(len(raw)) {
			err = fmt.Errorf("permitsemaphore: release %q of %s: %w", ids, s.c.Name, lockerr.ErrNotHeld)
		}
		if err == nil {
			rt.Report(s.c.Client, rt.Released, rt.Event{Kind: "permitsemaphore", Name: s.c.Name})
		}
		for _, p := range s.kept.get(ids) {
			p.settle(err, len(ids) == 1)
		}
		return struct{}{}, err
	})
	if wait.Pending(err) {
		return fmt.Errorf("permitsemaphore: release %q of %s: %w", ids, s.c.Name, err)
	}
	return err
}

// release runs the release script on raw ids, all or none if strict, and
// returns how many permits it released.
func (s *Semaphore) release(ctx context.Context, strict bool, raw ...string) (int64, error) {
	req := scripts.PesRelease{Sem: s.c.Keys, Strict: strict, YieldFor: handoff.Yield, IDs: raw, Record: s.c.Record()}
	n, rep, err := s.c.Release(ctx, req.Request())
	if err != nil {
		return 0, s.c.Errorf(err, "release from")
	}
	if err := rep.SyncErr(); err != nil && n > 0 {
		return n, s.c.Errorf(fmt.Errorf("released on the master: %w", err), "release from")
	}
	return n, nil
}

// UpdateLeaseTime sets the lease of the permit with the given id to end
// lease from now, or makes it permanent if lease is Forever. It
// reports whether the permit was held; if it was not (unknown id, released,
// or its lease already ended) nothing changes. A lease that Lease refuses
// returns an error matching latchkey.ErrInvalidLease and changes nothing.
// A permit kept alive (see Permit.KeepAlive) gets its own lease back at
// its next renewal, unless made permanent.
func (s *Semaphore) UpdateLeaseTime(ctx context.Context, id string, lease Lease) (bool, error) {
	if err := lease.check(); err != nil {
		return false, fmt.Errorf("permitsemaphore: lease of %s in %s: %w", id, s.c.Name, err)
	}
	ms, err := s.lease(ctx, id, leaseEnd(time.Now(), lease))
	return ms != -2, err
}

// LeaseTime returns how long the permit with the given id stays held
// unless released or extended, or -1 if it is permanent. It returns an
// error matching latchkey.ErrNotHeld if the permit is not held.
func (s *Semaphore) LeaseTime(ctx context.Context, id string) (time.Duration, error) {
	ms, err := s.lease(ctx, id, 0)
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, fmt.Errorf("permitsemaphore: lease of %s in %s: %w", id, s.c.Name, lockerr.ErrNotHeld)
	}
	return scripts.Millis(ms), nil
}

// lease runs the lease script, setting the lease end to end unless that
// is 0: -2 not held, -1 permanent, else ms left.
func (s *Semaphore) lease(ctx context.Context, id string, end int64) (int64, error) {
	if err := rt.Usable(ctx, s.c.Name, s.c.Client); err != nil {
		return -2, fmt.Errorf("permitsemaphore: lease of %s in %s: %w", id, s.c.Name, err)
	}
	r, ok := rawID(id)
	if !ok {
		return -2, nil
	}
	rep, _ := s.c.Sender().Resend(ctx, scripts.PesLease{Sem: s.c.Keys, ID: r, End: end}.Request())
	ms, err := scripts.Int(rep.Cmd)
	if err != nil {
		return -2, fmt.Errorf("permitsemaphore: lease of %s in %s: %w", id, s.c.Name, err)
	}
	if err := rep.SyncErr(); err != nil && end != 0 && ms != -2 {
		return ms, fmt.Errorf("permitsemaphore: lease of %s in %s: updated on the master: %w", id, s.c.Name, err)
	}
	return ms, nil
}
