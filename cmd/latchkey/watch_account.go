package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// report prints the messages and the change of one look. A force-unlock's
// message replaces the release it caused, and accounts for the wake-up it
// published. A release addressed to a holder the change shows new (a grant,
// a fair-lock waiter woken) is the change's; else a release, handoff or
// change seen accounts for one release. Every other release is a hold that
// watch did not see. A holder gone with nothing heard is an expiry if its
// TTL has run out since the last look, and otherwise a release that watch
// did not hear; a fencing counter that moved further than the acquisitions
// seen and heard tells of holds it missed.
func (w *watcher) report(now time.Time, st *State, event, line string, hs []heard, dropped int) error {
	var forced, releases []heard
	for _, h := range hs {
		switch {
		case h.kind == "forced":
			forced = append(forced, h)
			w.wakes = append(w.wakes, h.at)
		case h.kind == "letter", w.forcedWake(h):
		default:
			releases = append(releases, h)
		}
	}
	others := w.settle(releases)
	unheard := len(releases) == 0 && len(forced) == 0
	switch gone := len(goneHolders(w.last, st)); {
	case len(forced) > 0 && (event == "released" || event == "handoff"):
		event = "" // said by the force-unlock's line
	case unheard && (event == "released" || event == "handoff") && w.expired(now):
		event, line = expiry(w.last, st, event, line)
	case w.lockRule(st):
		// Each release ends one hold: the first are those of the holders
		// gone since the last look, the others of holds it did not see.
		// Those not here yet are owed (see settle).
		w.owe(now, gone-len(others))
		others = others[min(gone, len(others)):]
	case explains(event) && len(others) > 0:
		others = others[1:]
	}
	for _, h := range others {
		ev := WatchEvent{Time: h.at, Event: "unseen_release", State: st, Channel: h.channel, Message: h.payload, What: h.what}
		line := fmt.Sprintf("released, hold not seen: %s (%q on %s)", ev.What, h.payload, h.channel)
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
	for _, h := range forced {
		owners := strings.Fields(h.payload)
		if len(owners) == 0 && w.last != nil {
			for _, o := range w.last.Holders {
				owners = append(owners, o.Owner)
			}
		}
		ev := WatchEvent{Time: h.at, Event: "forced", State: st, Channel: h.channel, Message: h.payload, What: "force-unlock", Owners: owners}
		line := fmt.Sprintf("force-unlocked, was held by %s: %s", strings.Join(owners, ","), summary(st))
		if err := w.emit(ev, line); err != nil {
			return err
		}
	}
	if why, n := w.missed(st, event, unheard, len(others)); why != "" {
		w.owe(now, n)
		if err := w.emit(WatchEvent{Time: now, Event: "missed", State: st, What: why}, "may have missed holds: "+why); err != nil {
			return err
		}
	}
	if event == "" {
		return nil
	}
	return w.emit(WatchEvent{Time: now, Event: event, State: st}, line)
}

// expected is how many releases the change from the last look to st
// accounts for: a lock's, one per holder gone; another kind's, one for a
// release, a handoff, or a change of count or queue.
func (w *watcher) expected(st *State, event string) int {
	if w.lockRule(st) {
		return len(goneHolders(w.last, st))
	}
	if explains(event) {
		return 1
	}
	return 0
}

// lockRule reports whether the change from the last look to st is a
// lock's, each release of which ended a hold (see oneHolder): a lock's
// before and after, or nothing before.
func (w *watcher) lockRule(st *State) bool {
	return w.last != nil && oneHolder(st.Kind) && (oneHolder(w.last.Kind) || w.last.Kind == kindNone)
}

// countFunc counts the elements of s for which f holds.
func countFunc[E any](s []E, f func(E) bool) int {
	n := 0
	for _, e := range s {
		if f(e) {
			n++
		}
	}
	return n
}

// explains reports whether a change event may account for a message: a
// release, a handoff, or a change of count or queue.
func explains(event string) bool {
	return event == "released" || event == "handoff" || event == "changed"
}

// oneHolder reports whether kind is a lock's that one owner holds at a
// time, each release of which publishes one message (or none, a fair
// lock's with nobody queued).
func oneHolder(kind string) bool {
	return kind == kindMutex || kind == kindFairLock || kind == kindEitherLock
}

// goneHolders returns the owners that held in prev (nil: none) and do not
// in cur.
func goneHolders(prev, cur *State) []string {
	var out []string
	if prev == nil {
		return nil
	}
	for _, h := range prev.Holders {
		if !slices.ContainsFunc(cur.Holders, func(c Holder) bool { return c.Owner == h.Owner }) {
			out = append(out, h.Owner)
		}
	}
	return out
}

// expirySlack is how much sooner than its TTL said a hold may have ended
// and still count as expired: the TTL was read a little after the look
// began.
const expirySlack = 50 * time.Millisecond

// expired reports whether the TTL of the last look's holds has run out by
// now.
func (w *watcher) expired(now time.Time) bool {
	prev := w.last
	return prev != nil && prev.TTLms > 0 && now.Sub(w.lastAt) >= time.Duration(prev.TTLms)*time.Millisecond-expirySlack
}

// expiry says that the holds of prev, gone with nothing heard, ran out:
// an expiry for sure where a release would have published (a mutex's
// always; any lock's with waiters queued, to the first of them), else a
// release or an expiry (a fair lock's release with nobody queued
// publishes nothing).
func expiry(prev, cur *State, event, line string) (string, string) {
	if prev.Kind != kindMutex && len(prev.Queue) == 0 {
		return event, strings.Replace(line, event, event+" (or expired: its TTL ran out, and a release with nobody queued publishes nothing)", 1)
	}
	s := fmt.Sprintf("expired: the hold of %s ran out, nothing released it", holdersCell(prev.Holders))
	if len(cur.Holders) > 0 {
		s += "; acquired by " + holdersCell(cur.Holders)
	}
	return "expired", s + ": " + summary(cur)
}

// missed says what the look shows that watch did not hear, "" if
// nothing: a holder replaced with no release heard (its TTL had not run
// out), or a fencing counter (a mutex's or a fair lock's, drawn at each
// latchkey acquisition, re-entries included) that moved further than the
// acquisitions seen (fresh holders) and the holds heard of (unseen
// releases). With patterns, every release that hands a lock over is
// heard; a fair lock's release with nobody queued publishes nothing.
func (w *watcher) missed(st *State, event string, unheard bool, unseen int) (string, int) {
	prev := w.last
	var why []string
	missed := 0
	if event == "handoff" && unheard {
		why = append(why, fmt.Sprintf("%s holds now, and no release of %s was heard", holdersCell(st.Holders), holdersCell(prev.Holders)))
	}
	if prev == nil || prev.Token == nil || st.Token == nil || prev.Kind != st.Kind || (st.Kind != kindMutex && st.Kind != kindFairLock) {
		return strings.Join(why, "; "), 0
	}
	jump := *st.Token - *prev.Token
	seen := int64(unseen)
	for _, h := range st.Holders {
		i := slices.IndexFunc(prev.Holders, func(p Holder) bool { return p.Owner == h.Owner })
		switch {
		case h.Client != "latchkey":
		case i < 0:
			seen += h.Count
		case h.Count > prev.Holders[i].Count:
			seen += h.Count - prev.Holders[i].Count
		}
	}
	if jump > seen && jump < 1<<20 { // a counter recreated from the clock jumps by far more
		missed = int(jump - seen)
		why = append(why, fmt.Sprintf("the fencing counter went from %d to %d: %d latchkey acquisitions (re-entries count) since the last look, %d of them seen or heard",
			*prev.Token, *st.Token, jump, seen))
	}
	return strings.Join(why, "; "), missed
}

// owedWithin bounds how long after a look the release messages it found
// missing (see owe) may still arrive: a message arrives as soon as it is
// published, but a busy machine may be late to read it.
const owedWithin = time.Second

// owe notes that n releases the look at now accounted for (a holder gone,
// a hold counted missed) were not heard yet: when they arrive, settle
// takes them as that look's, not as holds of their own.
func (w *watcher) owe(now time.Time, n int) {
	for range n {
		w.owed = append(w.owed, now)
	}
}

// settle returns releases less those owed to earlier looks (see owe),
// the first to arrive, within owedWithin of their look.
func (w *watcher) settle(releases []heard) []heard {
	for len(w.owed) > 0 && len(releases) > 0 {
		if releases[0].at.Sub(w.owed[0]) <= owedWithin {
			releases = releases[1:]
		}
		w.owed = w.owed[1:]
	}
	for len(w.owed) > 0 && time.Since(w.owed[0]) > owedWithin {
		w.owed = w.owed[1:]
	}
	return releases
}

// forceWakeWithin bounds how long after a force-unlock's message the
// wake-up that its script published after it may arrive: both come from
// one script, one after the other.
const forceWakeWithin = time.Second

// forcedWake reports whether h is the wake-up of a force-unlock heard
// before it, and if so takes it off the wake-ups expected. A fair lock's
// force-unlock may publish none (no waiter), hence the bound.
func (w *watcher) forcedWake(h heard) bool {
	for len(w.wakes) > 0 && h.at.Sub(w.wakes[0]) > forceWakeWithin {
		w.wakes = w.wakes[1:]
	}
	if len(w.wakes) == 0 || h.channel == w.n.sem.Channel || h.channel == w.n.latchChannel {
		return false
	}
	w.wakes = w.wakes[1:]
	return true
}
