package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A WatchEvent is one line of watch -json.
type WatchEvent struct {
	Time time.Time `json:"time"`
	// Event is now, acquired, released, handoff, changed, expired,
	// forced, unseen_release, missed, not_renewed or dropped (see the
	// package doc).
	Event string `json:"event"`
	State *State `json:"state"`
	// Channel and Message are the pub/sub message of an unseen_release or
	// a forced event; What says what the message means.
	Channel string `json:"channel,omitempty"`
	Message string `json:"message,omitempty"`
	What    string `json:"what,omitempty"`
	// Owners are the holders a force-unlock forced out.
	Owners []string `json:"owners,omitempty"`
	// NotRenewedMs and ExpiresInMs (not_renewed): how long the hold has
	// gone without a renewal, and how long until its TTL runs out; LeaseMs
	// the lease that was measured against: -lease's, or where a TTL was
	// seen over it, the largest TTL seen, and then AtLeast: the hold has
	// gone without a renewal at least that long.
	NotRenewedMs int64 `json:"not_renewed_ms,omitempty"`
	ExpiresInMs  int64 `json:"expires_in_ms,omitempty"`
	LeaseMs      int64 `json:"lease_ms,omitempty"`
	AtLeast      bool  `json:"at_least,omitempty"`
	// Dropped (dropped) is how many messages arrived faster than watch
	// could keep them between two looks.
	Dropped int `json:"dropped,omitempty"`
}

// emit prints ev: after its time, line; with -json, ev itself.
func (w *watcher) emit(ev WatchEvent, line string) error {
	if w.json {
		return json.NewEncoder(w.e.stdout).Encode(ev)
	}
	_, err := fmt.Fprintf(w.e.stdout, "%s  %s\n", stamp(ev.Time), line)
	return err
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

// seconds formats ms as seconds with one decimal.
func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s" }

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
		fmt.Fprintf(&b, ", %d queued: %s", len(st.Queue), strings.Join(owners, " "))
	}
	return b.String()
}

// what says what a message on one of name's channels means, as far as
// its channel and payload tell (Redisson's messages, which latchkey's
// releases publish too).
func what(n names, m message) string {
	switch {
	case m.channel == n.lock.Channel && m.payload == "0":
		return "unlock"
	case m.channel == n.rw.Channel && m.payload == "0":
		return "read-unlock"
	case m.channel == n.rw.Channel && m.payload == "1":
		return "write-unlock (or a waiting writer gave up)"
	case m.channel == n.sem.Channel && m.payload == "2147483647":
		return "semaphore deleted (latchkey's Delete wakes every waiter)"
	case m.channel == n.sem.Channel:
		if _, err := strconv.ParseInt(m.payload, 10, 64); err == nil {
			return "semaphore release (" + m.payload + ")"
		}
	case m.channel == n.latchChannel && m.payload == "0":
		return "latch zero"
	case m.channel == n.latchChannel && m.payload == "1":
		return "latch count set, or latch deleted"
	}
	return "message"
}
