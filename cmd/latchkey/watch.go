package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
)

// runWatch follows one name: it prints its state, then a line with the
// time each time it changes. It looks again whenever a message arrives on
// a channel that the synchronizer's releases publish on (through a pub/sub
// Hub of the library), and otherwise only at the backstop interval, or
// when the holder's TTL runs out. It ends on SIGINT or SIGTERM.
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
	w := &watcher{e: e, c: c, name: rest[0], kind: *kind, json: *asJSON, hub: notify.New(c.client), wake: make(chan struct{}, 1), subs: map[string]*watchSub{}}
	defer w.close()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		case <-timer.C:
		}
		next, err := w.look(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "%s  %v\n", stamp(time.Now()), err)
			next = *every
		}
		timer.Reset(min(next, *every))
	}
}

// A watcher holds the state of a watch between looks.
type watcher struct {
	e          *env
	c          *conn
	name, kind string
	json       bool // print WatchEvents, one per line
	hub        *notify.Hub
	wake       chan struct{}
	last       *State
	subs       map[string]*watchSub
	wg         sync.WaitGroup
}

// A watchSub forwards one channel's messages to the watcher.
type watchSub struct {
	s    *notify.Subscription
	stop chan struct{}
}

// look reads the state, prints it if it changed, follows the channels it
// needs, and returns how soon to look again at the latest: when the TTL
// runs out (expiry publishes nothing).
func (w *watcher) look(ctx context.Context) (time.Duration, error) {
	rctx, cancel := w.e.withTimeout(ctx)
	defer cancel()
	st, err := read(rctx, w.c, w.name, w.kind)
	if err != nil {
		return 0, err
	}
	sortState(st)
	if event, line := change(w.last, st); event != "" {
		if err := w.print(time.Now(), event, line, st); err != nil {
			return 0, err
		}
	}
	w.last = st
	if err := w.follow(rctx, channels(st)); err != nil {
		return 0, err
	}
	if st.TTLms > 0 {
		return time.Duration(st.TTLms)*time.Millisecond + 20*time.Millisecond, nil
	}
	return time.Hour, nil
}

// channels returns the channels the releases of st publish on: the
// primitive's shared channel, which is all of them for a mutex, a
// read-write lock, the semaphores and the latch; and for a fair lock,
// Redisson's channel of each queued Redisson waiter, which its release
// tells. The Hubs' own channels of latchkey waiters are not followed: a
// subscriber there would make a release think a dead waiter alive.
func channels(st *State) []string {
	n := namesOf(st.Name)
	chs := []string{n.lock.Channel, n.rw.Channel, n.sem.Channel, n.latchChannel}
	if st.Kind == kindFairLock {
		for _, q := range st.Queue {
			if q.Client == "redisson" {
				chs = append(chs, n.lock.Channel+":"+q.Owner)
			}
		}
	}
	return chs
}

// follow subscribes to the channels in want not yet followed and drops
// those no longer wanted.
func (w *watcher) follow(ctx context.Context, want []string) error {
	keep := map[string]bool{}
	for _, ch := range want {
		keep[ch] = true
		if w.subs[ch] != nil {
			continue
		}
		s, err := w.hub.Subscribe(ctx, ch, notify.WakeAll)
		if err != nil {
			return fmt.Errorf("%s: subscribe %s: %w", w.c.server, ch, err)
		}
		ws := &watchSub{s: s, stop: make(chan struct{})}
		w.subs[ch] = ws
		w.wg.Add(1)
		go w.forward(ws)
	}
	for ch, ws := range w.subs {
		if !keep[ch] {
			close(ws.stop)
			ws.s.Close()
			delete(w.subs, ch)
		}
	}
	return nil
}

func (w *watcher) forward(ws *watchSub) {
	defer w.wg.Done()
	for {
		select {
		case <-ws.s.C():
			select {
			case w.wake <- struct{}{}:
			default:
			}
		case <-ws.stop:
			return
		case <-ws.s.Done():
			return
		}
	}
}

func (w *watcher) close() {
	for ch, ws := range w.subs {
		close(ws.stop)
		ws.s.Close()
		delete(w.subs, ch)
	}
	w.wg.Wait()
	_ = w.hub.Close()
}

// A WatchEvent is one line of watch -json.
type WatchEvent struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"` // now, acquired, released, handoff or changed
	State *State    `json:"state"`
}

// print prints one change: line after the time, or with -json a WatchEvent.
func (w *watcher) print(at time.Time, event, line string, st *State) error {
	if w.json {
		return json.NewEncoder(w.e.stdout).Encode(WatchEvent{Time: at, Event: event, State: st})
	}
	_, err := fmt.Fprintf(w.e.stdout, "%s  %s\n", stamp(at), line)
	return err
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// change describes how cur differs from prev (nil at the start): the
// event's name and a line that says it. Both are "" if nothing but the TTL
// moved.
func change(prev, cur *State) (event, line string) {
	now := summary(cur)
	if prev != nil && summary(prev) == now {
		return "", ""
	}
	if prev == nil {
		return "now", "now: " + now
	}
	was, is := holdersCell(prev.Holders), holdersCell(cur.Holders)
	switch {
	case was == is:
		event, line = "changed", "changed"
	case len(prev.Holders) == 0:
		event, line = "acquired", "acquired by "+is
	case len(cur.Holders) == 0:
		event, line = "released", "released by "+was
	default:
		event, line = "handoff", "handoff "+was+" -> "+is
	}
	return event, line + ": " + now
}

// summary is a one-line view of st without its TTL, which moves all the
// time.
func summary(st *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", st.Name, st.Kind)
	if len(st.Holders) > 0 {
		fmt.Fprintf(&b, ", held by %s", holdersCell(st.Holders))
	} else if st.Kind != kindNone {
		b.WriteString(", free")
	}
	if st.Mode != "" {
		fmt.Fprintf(&b, ", mode %s", st.Mode)
	}
	if st.Token != nil {
		fmt.Fprintf(&b, ", token %d", *st.Token)
	}
	if st.Permits != nil {
		fmt.Fprintf(&b, ", permits %d", *st.Permits)
	}
	if st.Count != nil {
		fmt.Fprintf(&b, ", count %d", *st.Count)
	}
	if len(st.Queue) > 0 {
		owners := make([]string, len(st.Queue))
		for i, q := range st.Queue {
			owners[i] = q.Owner
		}
		fmt.Fprintf(&b, ", %d waiting: %s", len(st.Queue), strings.Join(owners, " "))
	}
	return b.String()
}
