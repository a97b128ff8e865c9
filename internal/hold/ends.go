package hold

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
)

// How holds end: by a release, by loss, or by a release whose answer
// never came; and the contexts that end with them.

// Decremented records that a release left the hold under key held: one
// count less, but never none, since the server says the owner still holds
// it (a re-entry whose answer was lost counted there, not here), and it
// must go on being kept alive.
func (t *Table) Decremented(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil {
		h.releasing = false
		h.count = max(h.count-1, 1)
	}
}

// Released records that the hold under key ended with its release.
func (t *Table) Released(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil {
		t.endLocked(h, nil)
	}
}

// NotHeld records that a release found the hold under key gone: it was lost.
func (t *Table) NotHeld(key, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil {
		t.endLocked(h, fmt.Errorf("%s: %w: %s", t.what(), lockerr.ErrLost, why))
	}
}

// Abandoned records an unlock under key whose outcome is unknown (the
// request failed without an answer). As Redisson does, the handle counts it
// as a release: a hold whose count drops to 0 ends and its keep stops, so
// that a release that did not apply ends with the lease on the server
// instead of being renewed forever. An uncertain hold is kept instead: the
// server may count it still, and only its renewal can tell.
func (t *Table) Abandoned(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil {
		h.releasing = false
		if h.count--; h.count <= 0 {
			if h.uncertain {
				h.count = 1
			} else {
				t.endLocked(h, nil)
			}
		}
	}
}

// Uncertain marks the live hold under key, if any, as possibly counted
// more often on the server than here: a re-entry's outcome stayed unknown.
func (t *Table) Uncertain(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds.get(key); h != nil {
		h.uncertain = true
	}
}

// Lose ends h as lost with err, unless it already ended. While an unlock
// of its last count is under way (see ClaimPlain, Claim), a loss found on
// the server may be that unlock's own release, and its answer says how
// the hold ended; but a validity that ran out (lease.ErrExpired) ends the
// hold at once, as it would without the unlock: the holder must stop
// relying on it now, however long the unlock's answer takes.
func (t *Table) Lose(h *Hold, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holds.get(h.key) == h && (!h.releasing || errors.Is(err, lease.ErrExpired)) {
		t.endLocked(h, err)
	}
}

// Detach takes the hold under key off the books without ending it, when
// this is its last count, and returns it (nil if there is none); with
// counts left it takes one off and returns nil. A detached hold is no
// longer kept alive, nor found by Get or an unlock; Finish ends it.
func (t *Table) Detach(key string) (h *Hold, last bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h = t.holds.get(key); h == nil {
		return nil, false
	}
	if h.count--; h.count > 0 {
		return h, false
	}
	t.holds.remove(key)
	h.keep.Stop()
	return h, true
}

// Finish ends a detached hold with err as its reason.
func (t *Table) Finish(h *Hold, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finishLocked(h, err)
}

func (t *Table) endLocked(h *Hold, err error) {
	t.holds.remove(h.key)
	// A plain hold's id is never held again, and only an owner's unlock
	// asks WasLost: remembering plain losses would only fill the bound.
	if err != nil && !h.plain && len(t.lost) < maxLost {
		if t.lost == nil {
			t.lost = make(map[string]struct{})
		}
		t.lost[h.key] = struct{}{}
	}
	h.keep.Stop()
	t.finishLocked(h, err)
}

func (t *Table) finishLocked(h *Hold, err error) {
	h.err = err
	if t.client != nil {
		e := rt.Event{Kind: t.kind, Name: t.name, Err: err}
		if err == nil {
			rt.Report(t.client, rt.Released, e)
		} else {
			rt.Report(t.client, rt.Lost, e)
		}
	}
	h.ended = true
	if h.done != nil {
		close(h.done)
	}
	for _, cancel := range h.cancels {
		cancel(err)
	}
	h.cancels = nil
	// Done and Err move on to the newest hold still live, if any.
	for i, cur := range t.cur {
		if cur == h {
			if n := t.newestLocked(i - 1); n != nil {
				t.cur[i] = n
			}
		}
	}
}

// newestLocked returns the live hold of class c (or Any) acquired last, or nil.
func (t *Table) newestLocked(c int) *Hold {
	var n *Hold
	for h := range t.holds.all {
		if (c == Any || h.class == c) && (n == nil || h.seq > n.seq) {
			n = h
		}
	}
	return n
}

// Context returns a copy of parent that is cancelled when h ends: with
// context.Canceled as its cause after its release, or with the error that
// says why it was lost (matching lockerr.ErrLost).
func (t *Table) Context(parent context.Context, h *Hold) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	t.mu.Lock()
	defer t.mu.Unlock()
	if h.ended {
		cancel(h.err)
	} else {
		h.cancels = append(h.cancels, cancel)
	}
	return ctx
}

// Keeping returns what keeps h alive.
func (h *Hold) Keeping() Keeping { return h.keep }
