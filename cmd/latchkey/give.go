package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
)

// runRelease gives permits back to a semaphore whose holders died without
// releasing them (-n), or releases one permit of a permit semaphore by its
// id (-id), as the holder's own release would: through the library, which
// hands them to latchkey's waiters in line and tells Redisson's.
func runRelease(ctx context.Context, e *env, args []string) error {
	ch := newChanging("release", "semaphore or permitsemaphore", "release [flags] (-n N | -id ID) NAME", releaseHelp)
	n := ch.fs.Int64("n", 0, "semaphore: the number of permits to give back")
	id := ch.fs.String("id", "", "permitsemaphore: the `ID` of the permit to release, as inspect shows it")
	rest, err := ch.parse(e, args, 1, "exactly one NAME")
	if err != nil {
		return err
	}
	name := rest[0]
	if *n < 0 || (*n > 0) == (*id != "") {
		return usagef("give either -n N (N > 0) or -id ID")
	}
	t, err := ch.open(ctx, e, name, fmt.Sprintf("release permits of %q", name))
	if err != nil {
		return err
	}
	defer t.close()
	st := t.st
	what := fmt.Sprintf("permit %s", *id)
	switch {
	case st.Kind == kindCounter:
		return refused("%q is a plain integer, a semaphore or a latch: pass -kind semaphore if it is a semaphore; nothing released", name)
	case *n > 0 && st.Kind == kindSemaphore:
		what = counted(*n, "permit")
	case *id != "" && st.Kind == kindPermits:
	case *n > 0 && st.Kind == kindPermits:
		return refused("%q is a permit semaphore: release its permits by -id (inspect lists them); nothing released", name)
	case *id != "" && st.Kind == kindSemaphore:
		return refused("%q is a semaphore, whose permits have no ids: release them by -n; nothing released", name)
	default:
		return refused("%s: key %q is a %s: only a semaphore's (-n) or a permit semaphore's (-id) permits can be released", t.c.server, name, st.Kind)
	}
	q := fmt.Sprintf("Release %s of %s %q on %s (available: %d, queued: %d)? [y/N] ", what, st.Kind, name, t.c.server, *st.Permits, len(st.Queue))
	if err := approve(e, *ch.yes, q); err != nil {
		return err
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	if st.Kind == kindSemaphore {
		err = semaphore.New(t.c.client, name).Release(ctx, *n)
	} else {
		err = permitsemaphore.New(t.c.client, name).Release(ctx, *id)
	}
	switch {
	case errors.Is(err, latchkey.ErrNotHeld):
		return nothingHere("%s: %q holds no permit %s (released, expired, or never acquired)", t.c.server, name, *id)
	case err != nil:
		return t.c.keyErr(name, err)
	}
	fmt.Fprintf(e.stdout, "%s: released %s (available before: %d, queued: %d)\n", name, what, *st.Permits, len(st.Queue))
	return nil
}

// runCountdown counts a latch down whose counting processes died, through
// the library's CountDown: at zero the latch goes and every waiter is
// released, latchkey's by its letter and Redisson's by the zero message.
func runCountdown(ctx context.Context, e *env, args []string) error {
	ch := newChanging("countdown", "countdownlatch", "countdown [flags] NAME", countdownHelp)
	n := ch.fs.Int64("n", 1, "how many times to count down (it stops at zero)")
	rest, err := ch.parse(e, args, 1, "exactly one NAME")
	if err != nil {
		return err
	}
	name := rest[0]
	if *n < 1 {
		return usagef("-n must be at least 1")
	}
	t, err := ch.open(ctx, e, name, fmt.Sprintf("count down %q", name))
	if err != nil {
		return err
	}
	defer t.close()
	st := t.st
	switch st.Kind {
	case kindLatch:
	case kindCounter:
		return refused("%q is a plain integer, a semaphore or a latch: pass -kind countdownlatch if it is a latch; nothing counted", name)
	default:
		return refused("%s: key %q is a %s: only a countdownlatch counts down", t.c.server, name, st.Kind)
	}
	from := *st.Count
	if from <= 0 {
		return nothingHere("%s: no latch %q (a latch is gone once at zero)", t.c.server, name)
	}
	by := min(*n, from)
	q := fmt.Sprintf("Count down countdownlatch %q on %s from %d to %d? [y/N] ", name, t.c.server, from, from-by)
	if err := approve(e, *ch.yes, q); err != nil {
		return err
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	l := countdownlatch.New(t.c.client, name)
	for range by {
		if err := l.CountDown(ctx); err != nil {
			return t.c.keyErr(name, err)
		}
	}
	left, err := l.Count(ctx)
	if err != nil {
		return t.c.keyErr(name, err)
	}
	fmt.Fprintf(e.stdout, "%s: counted down from %d to %d", name, from, left)
	if left == 0 {
		fmt.Fprint(e.stdout, "; its waiters were released")
	}
	fmt.Fprintln(e.stdout)
	return nil
}
