package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
)

// runUnlock force-unlocks a lock whoever holds it, through the library's
// own forced unlock, which wakes latchkey's and Redisson's waiters alike.
func runUnlock(ctx context.Context, e *env, args []string) error {
	ch := newChanging("unlock", "mutex, fairlock or rwlock", "unlock [flags] NAME", unlockHelp)
	rest, err := ch.parse(e, args, 1, "exactly one NAME")
	if err != nil {
		return err
	}
	name := rest[0]
	t, err := ch.open(ctx, e, name, fmt.Sprintf("force-unlock %q", name))
	if err != nil {
		return err
	}
	defer t.close()
	c, st := t.c, t.st
	if err := t.lock("force-unlocked"); err != nil {
		return err
	}
	if len(st.Holders) == 0 {
		return notLocked(e, st)
	}
	q := fmt.Sprintf("Force-unlock %s %q on %s, held by %s?\n  %s.\n[y/N] ", st.Kind, name, c.server, heldBy(st), told(st))
	if err := approve(e, *ch.yes, q); err != nil {
		return err
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	held, err := force(ctx, c, st)
	if err != nil {
		return err
	}
	if !held {
		return notLocked(e, st)
	}
	fmt.Fprintf(e.stdout, "%s: force-unlocked %s, was held by %s; %s; %s\n", name, st.Kind, heldBy(st), told(st), waiting(st))
	return nil
}

// heldBy names st's holders as their operators know them: each one's
// host, pid and program where its process recorded itself, else its
// owner id.
func heldBy(st *State) string {
	s := make([]string, len(st.Holders))
	for i, h := range st.Holders {
		switch {
		case h.Process != nil:
			s[i] = fmt.Sprintf("%s (owner %s)", h.Process, h.Owner)
		case h.Client == "redisson":
			s[i] = fmt.Sprintf("a Java client (owner %s)", h.Owner)
		default:
			s[i] = fmt.Sprintf("owner %s (no process record)", h.Owner)
		}
	}
	return strings.Join(s, ", ")
}

// told says when st's holders learn that they were forced out: a latchkey
// holder's Hub listens on the lock's channel (since the library's commit
// "A holder learns of a force-unlock within a second"), a Java client's
// watchdog only finds the lock gone.
func told(st *State) string {
	var latchkey, java bool
	for _, h := range st.Holders {
		latchkey = latchkey || h.Client == "latchkey"
		java = java || h.Client == "redisson"
	}
	var s []string
	if latchkey {
		s = append(s, "the holder keeps running, and is told within about a second (its Done closes; "+
			"at its next renewal if its client polls)")
	}
	if java {
		s = append(s, "a Java holder is never told: its watchdog stops at its next renewal, and it runs on as if it held")
	}
	return strings.Join(s, "; ")
}

// waiting says who waits for st: its queued waiters, and the clients
// listening on its shared channel, where the waiters without a queue entry
// wait (a read-write lock's readers, Redisson's waiters).
func waiting(st *State) string {
	s := fmt.Sprintf("%d queued", len(st.Queue))
	if d := dead(st); d > 0 {
		s += fmt.Sprintf(" (%d dead)", d)
	}
	if n := st.Subscribers; n != nil && *n > 0 {
		s += fmt.Sprintf(", %d %s listening on %s (waiters without a queue entry, each client once)",
			*n, plural(int(*n), "client"), st.Channel)
	}
	return s
}

// notLocked says that st's lock is not locked, with its exit status,
// and how to remove what its dead waiters left.
func notLocked(e *env, st *State) error {
	fmt.Fprintf(e.stdout, "%s: not locked", st.Name)
	n, d := len(st.Queue), dead(st)
	switch {
	case n > 0 && d == n:
		fmt.Fprintf(e.stdout, "; %d dead %s queued, left behind: run latchkey clear %s", d, plural(d, "waiter"), st.Name)
	case d > 0:
		fmt.Fprintf(e.stdout, "; %s: remove the dead with latchkey evict %s WAITER", waiting(st), st.Name)
	case n > 0:
		fmt.Fprintf(e.stdout, "; %s", waiting(st))
	}
	fmt.Fprintln(e.stdout)
	return &statusError{code: exitNotLocked}
}

// lock returns an error unless t is a lock, which can be what.
func (t *target) lock(what string) error {
	if isLock(t.st.Kind) {
		return nil
	}
	return refused("%s: key %q is a %s: only locks (mutex, fairlock, rwlock) can be %s; nothing done", t.c.server, t.st.Name, t.st.Kind, what)
}

// A lock is what unlock and clear act on, of any kind: the packages' own
// ForceUnlock (a mutex's or fair lock's also grants the lock to a queued
// latchkey waiter; a read-write lock's wakes every reader and writer) and
// Delete (every key of a free lock; its waiters are told to look again).
type lock interface {
	ForceUnlock(ctx context.Context) (bool, error)
	Delete(ctx context.Context) (bool, error)
}

// lockOf returns the lock of st's kind: a mutex's for kindEitherLock,
// whose hash nobody queues for, so that the mutex's forced unlock (the
// hash deleted, "0" on Redisson's shared channel) frees either.
func lockOf(c *conn, st *State) lock {
	switch st.Kind {
	case kindFairLock:
		return fairlock.New(c.client, st.Name)
	case kindRWLock:
		return rwlock.New(c.client, st.Name)
	}
	return mutex.New(c.client, st.Name)
}

// force force-unlocks st's lock and reports whether it was held.
func force(ctx context.Context, c *conn, st *State) (bool, error) {
	held, err := lockOf(c, st).ForceUnlock(ctx)
	if err != nil {
		return false, c.keyErr(st.Name, err)
	}
	return held, nil
}

// runClear deletes what a lock nobody holds left behind (the queues of
// waiters that died, the fencing counter), through the packages' Delete,
// which refuses a held lock.
func runClear(ctx context.Context, e *env, args []string) error {
	ch := newChanging("clear", "mutex, fairlock or rwlock", "clear [flags] NAME", clearHelp)
	rest, err := ch.parse(e, args, 1, "exactly one NAME")
	if err != nil {
		return err
	}
	t, err := ch.open(ctx, e, rest[0], fmt.Sprintf("clear %q", rest[0]))
	if err != nil {
		return err
	}
	defer t.close()
	st := t.st
	if err := t.lock("cleared"); err != nil {
		return err
	}
	if len(st.Holders) > 0 {
		return refused("%s: %s %q is held by %s: clear deletes only a free lock's keys (force-unlock first: latchkey unlock); nothing deleted", t.c.server, st.Kind, st.Name, holdersCell(st.Holders))
	}
	q := fmt.Sprintf("Delete every key of free %s %q on %s (%d in its queue)? [y/N] ", st.Kind, st.Name, t.c.server, len(st.Queue))
	if err := approve(e, *ch.yes, q); err != nil {
		return err
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	existed, err := lockOf(t.c, st).Delete(ctx)
	switch {
	case errors.Is(err, latchkey.ErrHeld):
		return refused("%s: %q was locked meanwhile: nothing deleted", t.c.server, st.Name)
	case err != nil:
		return t.c.keyErr(st.Name, err)
	case !existed:
		return nothingHere("%s: %q was gone meanwhile", t.c.server, st.Name)
	}
	fmt.Fprintf(e.stdout, "%s: cleared %s, its queue of %d and its fencing counter\n", st.Name, st.Kind, len(st.Queue))
	return nil
}
