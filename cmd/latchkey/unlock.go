package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
)

// runUnlock force-unlocks a lock whoever holds it, through the library's
// own forced unlock, which wakes latchkey's and Redisson's waiters alike.
func runUnlock(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("unlock", flag.ContinueOnError)
	yes := fs.Bool("yes", false, "do not ask for confirmation (required when stdin is not a terminal)")
	kind := fs.String("kind", "", "the kind of lock NAME is, instead of detecting it: mutex, fairlock or rwlock")
	rest, err := e.parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want exactly one NAME, got %d", len(rest))
	}
	name := rest[0]
	if err := checkKind(*kind); err != nil {
		return err
	}
	if !*yes && !terminal(e.stdin) {
		return usagef("stdin is not a terminal: pass -yes to force-unlock %q without confirmation", name)
	}
	c, err := e.conn.open()
	if err != nil {
		return err
	}
	defer c.client.Close()
	defer latchkey.Close(c.client) // the shared pub/sub Hub the publish command came from
	if err := keys.Usable(name, c.client); err != nil {
		return usagef("%v", err) // a name the library refuses on a cluster
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	st, err := read(ctx, c, name, *kind)
	if err != nil {
		return err
	}
	switch st.Kind {
	case kindNone:
		fmt.Fprintf(e.stdout, "%s: not locked\n", name)
		return nil
	case kindMutex, kindFairLock, kindRWLock:
	default:
		return fmt.Errorf("%s: key %q is a %s: only locks (mutex, fairlock, rwlock) can be force-unlocked", c.server, name, st.Kind)
	}
	if !*yes {
		ok, err := confirm(e, fmt.Sprintf("Force-unlock %s %q on %s, held by %s? [y/N] ", st.Kind, name, c.server, holdersCell(st.Holders)))
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not confirmed: nothing done")
		}
	}
	held, err := force(ctx, c, st)
	if err != nil {
		return err
	}
	if !held {
		fmt.Fprintf(e.stdout, "%s: not locked\n", name)
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: force-unlocked %s (was held by %s); %d waiting\n", name, st.Kind, holdersCell(st.Holders), len(st.Queue))
	return nil
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

// terminal reports whether r is a terminal: a character device other
// than the null device (which is where a program started without a
// stdin reads from).
func terminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// confirm asks question on stderr and reads a yes or no from stdin.
func confirm(e *env, question string) (bool, error) {
	fmt.Fprint(e.stderr, question)
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
