package main

import (
	"context"
	"fmt"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
)

// runUnlock force-unlocks a lock whoever holds it, through the library's
// own forced unlock, which wakes latchkey's and Redisson's waiters alike.
func runUnlock(ctx context.Context, e *env, args []string) error {
	ch := newChanging("unlock", "mutex, fairlock or rwlock")
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
	switch st.Kind {
	case kindMutex, kindFairLock, kindRWLock:
	default:
		return fmt.Errorf("%s: key %q is a %s: only locks (mutex, fairlock, rwlock) can be force-unlocked", c.server, name, st.Kind)
	}
	if len(st.Holders) == 0 {
		return notLocked(e, name)
	}
	q := fmt.Sprintf("Force-unlock %s %q on %s, held by %s? [y/N] ", st.Kind, name, c.server, holdersCell(st.Holders))
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
		return notLocked(e, name)
	}
	fmt.Fprintf(e.stdout, "%s: force-unlocked %s (was held by %s); %d waiting\n", name, st.Kind, holdersCell(st.Holders), len(st.Queue))
	return nil
}

// notLocked says that name is not locked, with its exit status.
func notLocked(e *env, name string) error {
	fmt.Fprintf(e.stdout, "%s: not locked\n", name)
	return &statusError{code: exitNotLocked}
}

// force deletes the lock and publishes what wakes its waiters, through the
// packages' own ForceUnlock (a mutex's or fair lock's also grants the lock
// to a queued latchkey waiter; a read-write lock's wakes every reader and
// writer).
func force(ctx context.Context, c *conn, st *State) (bool, error) {
	var held bool
	var err error
	switch st.Kind {
	case kindMutex:
		held, err = mutex.New(c.client, st.Name).ForceUnlock(ctx)
	case kindFairLock:
		held, err = fairlock.New(c.client, st.Name).ForceUnlock(ctx)
	case kindRWLock:
		held, err = rwlock.New(c.client, st.Name).ForceUnlock(ctx)
	}
	if err != nil {
		return false, c.keyErr(st.Name, err)
	}
	return held, nil
}
