package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
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
	lease := leaseFlag(fs)
	help(fs, "watch [flags] NAME", watchHelp)
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
	c.lease = *lease
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
	lastAt     time.Time // when the last look read
	renew      renewals
	wakes      []time.Time // when each force-unlock whose wake-up is still to come was heard
	owed       []time.Time // when each look that is owed a release message was (see owe)
}

// start follows the channels every release of the name publishes on
// before the first look, so that no release after it goes unheard. It
// subscribes as the library's scripts publish (see conn.publish).
func (w *watcher) start(ctx context.Context) error {
	rctx, cancel := w.e.withTimeout(ctx)
	defer cancel()
	pub, err := w.c.publish(rctx, w.n.lock.Channel)
	if err != nil {
		return err
	}
	w.in = newInbox(w.c.client, pub == "SPUBLISH")
	if err := w.in.follow(rctx, w.subscriptions(nil)); err != nil {
		w.in.close()
		return fmt.Errorf("%s: %w", w.c.server, err)
	}
	return nil
}

// look reads the state and prints what happened since the last look: the
// messages heard (a force-unlock, the releases that the change seen does
// not account for), the change, what it may have missed, a hold not
// renewed. It follows the channels the state needs and returns how soon
// to look again at the latest: when the TTL runs out or a renewal is
// overdue.
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
	heard := w.hearAll(msgs)
	event, line := change(w.last, st)
	if need := w.expected(st, event) - countFunc(heard, release); need > 0 {
		// The messages of the change seen may have arrived after the take:
		// they are published as the change is made, and arrive at once.
		// Those past them are a later change's: they go back.
		more, n := w.in.await(ctx, messageLag)
		keep := 0
		for keep < len(more) && need > 0 {
			if h, ok := w.hear(more[keep]); ok && release(h) {
				need--
			}
			keep++
		}
		heard, dropped = append(heard, w.hearAll(more[:keep])...), dropped+n
		w.in.unread(more[keep:])
	}
	if err := w.report(now, st, event, line, heard, dropped); err != nil {
		return 0, err
	}
	notRenewed, expires, lease, warn, check := w.renew.observe(st, w.c.lease)
	if warn {
		ev := WatchEvent{Time: now, Event: "not_renewed", State: st, NotRenewedMs: notRenewed.Milliseconds(),
			ExpiresInMs: expires.Milliseconds(), LeaseMs: lease.Milliseconds(), AtLeast: lease > w.c.lease}
		on := fmt.Sprintf("on a %s lease", w.c.lease)
		if ev.AtLeast { // the TTL was over the lease: how much longer the lease is, nothing tells
			on = fmt.Sprintf("at least: its lease is over the %s of -lease, and at least %s", w.c.lease, seconds(ev.LeaseMs))
		}
		line := fmt.Sprintf("not renewed for %s (%s): expires in %s: %s", seconds(ev.NotRenewedMs), on, seconds(ev.ExpiresInMs), summary(st))
		if err := w.emit(ev, line); err != nil {
			return 0, err
		}
	}
	w.last, w.lastAt = st, now
	if err := w.in.follow(rctx, w.subscriptions(st)); err != nil {
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

// messageLag bounds how long a look that saw a change waits for the
// message that the change published, when none came before the look.
const messageLag = 100 * time.Millisecond

// subscriptions returns the subscriptions to the channels that the
// releases of the name publish on (st is nil before the first look): the
// primitive's shared channel, which is all of them for a mutex, a
// read-write lock, the semaphores and the latch; latchkey's force-unlock
// channels; and a fair lock's waiters' own: Redisson's waiters' channels,
// redisson_lock__channel:{N}:<owner>, and latchkey's waiters' Hubs'
// channels, latchkey_lock__channel:{N}:<hub id>, which a release's grant
// goes to. Where patterns work (one server, or a cluster without sharded
// pub/sub), by a pattern each: every waiter's, including those that queue
// and are served between two looks; a Hub's only for a fair lock, whose
// releases do not count the letter's receivers (a mutex's do, to skip a
// dead waiter, and a watch among them would keep it). With sharded
// pub/sub, which has no patterns, the channel of each waiter queued at the
// latest look: one that queues and is served between two looks goes
// unheard, and look says what it may have missed.
func (w *watcher) subscriptions(st *State) []string {
	n, in := w.n, w.in
	subs := []string{in.exact(n.lock.Channel), in.exact(n.rw.Channel), in.exact(n.sem.Channel), in.exact(n.latchChannel),
		in.exact(n.lock.Forced), in.exact(n.rw.Forced)}
	fair := st != nil && st.Kind == kindFairLock
	if !in.sharded {
		subs = append(subs, in.prefix(n.lock.Channel+":"))
		if fair {
			subs = append(subs, in.prefix(keys.HubChannel(n.lock.Hubs, ""))) // every Hub's
		}
		return subs
	}
	if fair {
		for _, q := range st.Queue {
			if q.channel != "" {
				subs = append(subs, in.exact(q.channel))
			}
		}
	}
	return subs
}
