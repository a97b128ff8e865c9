package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// newTable returns an aligned-columns writer on w; Flush it.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// row writes cells as one tab-separated line.
func row(w io.Writer, cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(w, strings.Join(s, "\t"))
}

// millis shows a time to live: "-" for none (0), "no ttl" for -1.
func millis(ms int64) string {
	switch {
	case ms == -1:
		return "no ttl"
	case ms == 0:
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// deadline shows a waiter's liveness: alive, and when its entry lapses
// unless renewed, or dead, and why (see Waiter.Alive).
func deadline(w Waiter) string {
	beat := "heartbeat" // latchkey's waiters renew their entry at each attempt
	if w.Client == "redisson" {
		beat = "deadline" // a Redisson fair-lock waiter's wait timeout
	}
	switch {
	case w.InMs < 0:
		return fmt.Sprintf("dead, %s lapsed %s ago", beat, rounded(w.LapsedMs))
	case !w.Alive:
		return fmt.Sprintf("dead, not listening (%s lapses in %s)", beat, rounded(w.InMs))
	}
	return fmt.Sprintf("alive, %s lapses in %s", beat, rounded(max(w.InMs, 1)))
}

// rounded shows ms as a duration to the second, or to the ms under one.
func rounded(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	return d.String()
}

// permits shows a semaphore's permits: those available, and for a permit
// semaphore, acquired, expired and total.
func permits(st *State) string {
	switch {
	case st.PermitsTotal != nil:
		return fmt.Sprintf("%d available, %d acquired, %d expired (not reclaimed yet), %d total",
			*st.Permits, *st.PermitsAcquired, *st.PermitsExpired, *st.PermitsTotal)
	case st.Kind == kindSemaphore:
		return fmt.Sprintf("%d available (acquired and total unknown: a semaphore records no holders)", *st.Permits)
	}
	return fmt.Sprint(*st.Permits)
}

// printState writes one name's state as aligned tables; lease is the
// watchdog lease a hold's TTL is read against (-lease).
func printState(out io.Writer, st *State, lease time.Duration) error {
	t := newTable(out)
	row(t, "NAME", st.Name)
	row(t, "KIND", st.Kind)
	if st.Kind == kindNone || st.Kind == kindOther {
		row(t, "NOTE", st.Note)
		return t.Flush()
	}
	row(t, "TTL", millis(st.TTLms))
	if st.Mode != "" {
		row(t, "MODE", st.Mode)
	}
	if st.Token != nil {
		row(t, "COUNTER", fmt.Sprintf("%d (the fencing counter: the latest token drawn; a holder's own is in its row)", *st.Token))
	}
	if st.Permits != nil {
		row(t, "PERMITS", permits(st))
	}
	if st.Count != nil {
		row(t, "COUNT", *st.Count)
	}
	if st.Granted != "" {
		row(t, "GRANTED", st.Granted+" (not yet taken)")
	}
	if l := st.Leader; l != nil {
		row(t, "LEADER", fmt.Sprintf("%q, term %d (election)", l.Value, l.Term))
	}
	for _, g := range st.Grants {
		row(t, "GRANTED", fmt.Sprintf("%d to %s (not yet taken, grace ends in %dms)", g.Permits, g.Owner, g.InMs))
	}
	if n := st.Subscribers; n != nil && *n > 0 {
		row(t, "LISTENING", fmt.Sprintf("%d %s on %s (waiters without a queue entry, or queued ones; each client once)",
			*n, plural(int(*n), "client"), st.Channel))
	}
	if st.Note != "" {
		row(t, "NOTE", st.Note)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	rw := st.Kind == kindRWLock
	if len(st.Holders) > 0 {
		fmt.Fprintln(out)
		t = newTable(out)
		row(t, cells(rw, "HOLDER", "COUNT", "MODE", "TTL", "CLIENT", "TOKEN", "PROCESS", "LIVENESS")...)
		for _, h := range st.Holders {
			d, token := "-", "-"
			if h.TTLms != nil {
				d = millis(*h.TTLms)
			}
			if h.Token != nil {
				token = fmt.Sprint(*h.Token)
			}
			row(t, cells(rw, h.Owner, h.Count, h.Mode, d, h.Client, token, processCell(h.Process), holderLiveness(st, h, lease))...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(st.Leases)+len(st.Expired) > 0 {
		fmt.Fprintln(out)
		t = newTable(out)
		row(t, "PERMIT", "TTL")
		for _, p := range st.Leases {
			d := "permanent"
			if p.TTLms >= 0 {
				d = millis(p.TTLms)
			}
			row(t, p.ID, d)
		}
		now := time.Now().UnixMilli()
		for _, p := range st.Expired {
			row(t, p.ID, fmt.Sprintf("expired %s ago, not reclaimed yet", rounded(max(now-p.ExpiresMs, 0))))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(st.Queue) > 0 {
		fmt.Fprintln(out)
		t = newTable(out)
		counted := st.Permits != nil
		row(t, waiterCells(rw, counted, "#", "WAITER", "MODE", "PERMITS", "LIVENESS", "CLIENT", "PROCESS")...)
		for i, w := range st.Queue {
			row(t, waiterCells(rw, counted, i+1, w.Owner, w.Mode, w.Permits, deadline(w), w.Client, processCell(w.Process))...)
		}
		return t.Flush()
	}
	return nil
}

// processCell shows the process behind an owner, "-" if unknown.
func processCell(p *Process) string {
	if p == nil {
		return "-"
	}
	return p.String()
}

// cells drops the holder columns MODE and TTL (the third and fourth)
// unless the lock is a read-write lock, where holds differ in both.
func cells(rw bool, c ...any) []any {
	if rw {
		return c
	}
	return append(c[:2:2], c[4:]...)
}

// waiterCells drops the waiter columns MODE (third) unless rw, and
// PERMITS (fourth) unless the waiters ask for permits.
func waiterCells(rw, counted bool, c ...any) []any {
	out := c[:2:2]
	if rw {
		out = append(out, c[2])
	}
	if counted {
		out = append(out, c[3])
	}
	return append(out, c[4:]...)
}

// holdersCell shows holders compactly for ls and watch: owner(count), ...
func holdersCell(hs []Holder) string {
	if len(hs) == 0 {
		return "-"
	}
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.Owner
		if h.Mode == "write" {
			s[i] += "(w)"
		}
		if h.Count != 1 {
			s[i] += fmt.Sprintf("×%d", h.Count)
		}
	}
	return strings.Join(s, ",")
}
