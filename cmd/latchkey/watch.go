package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
)

// runWatch follows one name: it prints its state, then a line with the
// time each time it changes, and one for each message on its channels
// that no change it saw accounts for. It looks at the state on three
// clocks, each independent of the others: every -every, messages or not;
// on each message on a channel that the synchronizer's releases publish
// on; and when the holder's TTL runs out (expiry publishes nothing) or its
// renewal is overdue. latchkey's force-unlocks say whom they forced out on
// a channel of their own (keys.Lock.Forced, keys.RWLock.Forced), which
// watch follows; a Java client's forceUnlock publishes what its unlock
// publishes, and shows as a release. It ends on SIGINT or SIGTERM.
func runWatch(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	kind := fs.String("kind", "", "the kind to read NAME as, instead of detecting it: "+kindList)
	every := fs.Duration("every", 5*time.Second, "look again at least this often, messages or not")
	asJSON := fs.Bool("json", false, "print each change as one JSON object per line")
	rest, err := e.parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("want exactly one NAME, got %d", len(rest))
	}
	if err := checkKind(*kind); err != nil {
		return err
	}
	if *every <= 0 {
		return usagef("-every must be positive")
	}
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.client.Close()
	w := &watcher{e: e, c: c, name: rest[0], n: namesOf(rest[0]), kind: *kind, json: *asJSON}
	if err := w.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer w.in.close()
	periodic := time.NewTicker(*every) // not moved by messages
	defer periodic.Stop()
	due := time.NewTimer(0) // the look the state asks for
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.in.wake:
		case <-periodic.C:
		case <-due.C:
		}
		next, err := w.look(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "%s  %v\n", stamp(time.Now()), err)
			next = time.Hour // the periodic look tries again
		}
		due.Reset(next)
	}
}

// A watcher holds the state of a watch between looks.
type watcher struct {
	e          *env
	c          *conn
	name, kind string
	n          names
	json       bool // print WatchEvents, one per line
	in         *inbox
	last       *State
	renew      renewals
	wakes      []time.Time // when each force-unlock whose wake-up is still to come was heard
}

// start follows the channels every release of the name publishes on
// before the first look, so that no release after it goes unheard. It
// subscribes as the library's scripts publish (a Hub's PublishCommand).
func (w *watcher) start(ctx context.Context) error {
	rctx, cancel := w.e.withTimeout(ctx)
	defer cancel()
	hub := notify.New(w.c.client)
	pub, err := hub.PublishCommand(rctx)
	_ = hub.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", w.c.server, err)
	}
	w.in = newInbox(w.c.client, pub == "SPUBLISH")
	if err := w.in.follow(rctx, w.channels(nil)); err != nil {
		w.in.close()
		return fmt.Errorf("%s: %w", w.c.server, err)
	}
	return nil
}

// look reads the state and prints what happened since the last look: the
// messages received (a force-unlock, the releases that the change seen
// does not account for), the change, a hold not renewed. It follows the
// channels the state needs and returns how soon to look again at the
// latest: when the TTL runs out or a renewal is overdue.
func (w *watcher) look(ctx context.Context) (time.Duration, error) {
	msgs, dropped := w.in.take()
	rctx, cancel := w.e.withTimeout(ctx)
	defer cancel()
	st, err := readAs(rctx, w.c, w.name, w.kind, w.in.counted())
	if err != nil {
		return 0, err
	}
	sortState(st)
	now := time.Now()
	event, line := change(w.last, st)
	if explains(event) && !slices.ContainsFunc(msgs, w.wakeUp) {
		// The message of the change seen may have arrived after the take:
		// it is published as the change is made, and arrives at once.
		more, n := w.in.await(ctx, messageLag)
		msgs, dropped = append(msgs, more...), dropped+n
		if len(more) > 0 {
			w.in.signal() // look again: they may tell of a later change too
		}
	}
	if err := w.report(now, st, event, line, msgs, dropped); err != nil {
		return 0, err
	}
	notRenewed, expires, warn, check := w.renew.observe(st)
	if warn {
		ev := WatchEvent{Time: now, Event: "not_renewed", State: st, NotRenewedMs: notRenewed.Milliseconds(), ExpiresInMs: expires.Milliseconds()}
		line := fmt.Sprintf("not renewed for %s: expires in %s: %s", seconds(ev.NotRenewedMs), seconds(ev.ExpiresInMs), summary(st))
		if err := w.emit(ev, line); err != nil {
			return 0, err
		}
	}
	w.last = st
	if err := w.in.follow(rctx, w.channels(st)); err != nil {
		return 0, fmt.Errorf("%s: %w", w.c.server, err)
	}
	next := time.Hour
	if st.TTLms > 0 {
		next = time.Duration(st.TTLms)*time.Millisecond + 20*time.Millisecond
	}
	if check > 0 {
		next = min(next, check)
	}
	return next, nil
}

// report prints the messages and the change of one look. A force-unlock's
// message replaces the release it caused, and accounts for the wake-up it
// published; a release, handoff or change seen accounts for one message;
// every other message is a release whose hold watch did not see.
func (w *watcher) report(now time.Time, st *State, event, line string, msgs []message, dropped int) error {
	var forced, others []message
	for _, m := range msgs {
		switch {
		case !w.wakeUp(m):
			forced = append(forced, m)
			w.wakes = append(w.wakes, m.at)
		case w.forcedWake(m):
		default:
			others = append(others, m)
		}
	}
	explained := 0
	if len(forced) > 0 && (event == "released" || event == "handoff") {
		event = "" // said by the force-unlock's line
	} else if explains(event) {
		explained++
	}
	for _, m := range others[min(explained, len(others)):] {
		ev := WatchEvent{Time: m.at, Event: "unseen_release", State: st, Channel: m.channel, Message: m.payload, What: what(w.n, m)}
		line := fmt.Sprintf("released, hold not seen: %s (%q on %s)", ev.What, m.payload, m.channel)
		if err := w.emit(ev, line); err != nil {
			return err
		}
	}
	if dropped > 0 {
		line := fmt.Sprintf("%d more messages arrived than watch keeps between looks, not shown", dropped)
		if err := w.emit(WatchEvent{Time: now, Event: "dropped", State: st, Dropped: dropped}, line); err != nil {
			return err
		}
	}
	for _, m := range forced {
		owners := strings.Fields(m.payload)
		if len(owners) == 0 && w.last != nil {
			for _, h := range w.last.Holders {
				owners = append(owners, h.Owner)
			}
		}
		ev := WatchEvent{Time: m.at, Event: "forced", State: st, Channel: m.channel, Message: m.payload, What: "force-unlock", Owners: owners}
		line := fmt.Sprintf("force-unlocked, was held by %s: %s", strings.Join(owners, ","), summary(st))
		if err := w.emit(ev, line); err != nil {
			return err
		}
	}
	if event == "" {
		return nil
	}
	return w.emit(WatchEvent{Time: now, Event: event, State: st}, line)
}

// messageLag bounds how long a look that saw a change waits for the
// message that the change published, when none came before the look.
const messageLag = 100 * time.Millisecond

// explains reports whether a change event may account for a message: a
// release, a handoff, or a change of count or queue.
func explains(event string) bool {
	return event == "released" || event == "handoff" || event == "changed"
}

// wakeUp reports whether m is a wake-up, a message of a release, rather
// than a force-unlock's own.
func (w *watcher) wakeUp(m message) bool {
	return m.channel != w.n.lock.Forced && m.channel != w.n.rw.Forced
}

// forceWakeWithin bounds how long after a force-unlock's message the
// wake-up that its script published after it may arrive: both come from
// one script, one after the other.
const forceWakeWithin = time.Second

// forcedWake reports whether m is the wake-up of a force-unlock heard
// before it, and if so takes it off the wake-ups expected. A fair lock's
// force-unlock may publish none (its latchkey waiters are woken on their
// Hubs' channels), hence the bound.
func (w *watcher) forcedWake(m message) bool {
	for len(w.wakes) > 0 && m.at.Sub(w.wakes[0]) > forceWakeWithin {
		w.wakes = w.wakes[1:]
	}
	if len(w.wakes) == 0 || m.channel == w.n.sem.Channel || m.channel == w.n.latchChannel {
		return false
	}
	w.wakes = w.wakes[1:]
	return true
}

// channels returns the channels the releases of the name publish on (st
// is nil before the first look): the primitive's shared channel, which is
// all of them for a mutex, a read-write lock, the semaphores and the
// latch; latchkey's force-unlock channels; and for a fair lock, Redisson's
// channel of each queued Redisson waiter, which its release tells. The
// Hubs' own channels of latchkey waiters are not followed: a subscriber
// there would make a release think a dead waiter alive.
func (w *watcher) channels(st *State) []string {
	n := w.n
	chs := []string{n.lock.Channel, n.rw.Channel, n.sem.Channel, n.latchChannel, n.lock.Forced, n.rw.Forced}
	if st != nil && st.Kind == kindFairLock {
		for _, q := range st.Queue {
			if q.Client == "redisson" {
				chs = append(chs, n.lock.Channel+":"+q.Owner)
			}
		}
	}
	return chs
}
