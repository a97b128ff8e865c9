package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// An lsPrinter prints ls's rows as they are found, batch by batch, from
// any goroutine: JSON lines, or a table whose columns widen as wider cells
// come (a row is never held back to align it with rows not found yet).
type lsPrinter struct {
	w     io.Writer
	json  bool
	lease time.Duration

	mu     sync.Mutex
	widths []int
	rows   int
}

var lsHeader = []string{"NAME", "KIND", "TTL", "HOLDERS", "PROCESS", "LIVENESS", "WAITERS", "VALUE", "NOTE"}

func newLsPrinter(w io.Writer, asJSON bool, lease time.Duration) *lsPrinter {
	return &lsPrinter{w: w, json: asJSON, lease: lease}
}

// print prints one batch of states.
func (p *lsPrinter) print(sts []*State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(sts) == 0 {
		return nil
	}
	if p.json {
		enc := json.NewEncoder(p.w)
		for _, st := range sts {
			if err := enc.Encode(st); err != nil {
				return err
			}
			p.rows++
		}
		return nil
	}
	lines := make([][]string, 0, len(sts)+1)
	if p.rows == 0 {
		lines = append(lines, lsHeader)
	}
	for _, st := range sts {
		lines = append(lines, lsRow(st, p.lease))
	}
	for _, l := range lines {
		for i, cell := range l {
			if i == len(p.widths) {
				p.widths = append(p.widths, 0)
			}
			p.widths[i] = max(p.widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, l := range lines {
		for i, cell := range l {
			b.WriteString(cell)
			if i < len(l)-1 {
				b.WriteString(strings.Repeat(" ", p.widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		b.WriteByte('\n')
	}
	p.rows += len(sts)
	_, err := io.WriteString(p.w, b.String())
	return err
}

// lsRow is one synchronizer's row.
func lsRow(st *State, lease time.Duration) []string {
	note := st.Note
	if note == "" {
		note = "-"
	}
	procs := make([]string, len(st.Holders))
	lives := make([]string, len(st.Holders))
	for i, h := range st.Holders {
		procs[i] = processCell(h.Process)
		lives[i] = shortLiveness(st, h, lease)
	}
	return []string{st.Name, st.Kind, millis(st.TTLms), holdersCell(st.Holders), orDash(strings.Join(procs, ",")),
		orDash(strings.Join(lives, ",")), waitersCell(st), value(st), note}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortLiveness is holderLiveness in a few words, for ls.
func shortLiveness(st *State, h Holder, lease time.Duration) string {
	var s string
	switch {
	case h.Owner == st.Granted:
		s = "granted"
	case h.TTLms != nil && *h.TTLms == -1:
		s = "no ttl"
	case h.RunningDown:
		s = "not renewed for " + rounded(*h.RenewedMs)
	case h.RenewedMs != nil:
		s = "renewed " + rounded(*h.RenewedMs) + " ago"
	default:
		s = "ttl over " + lease.String() + " lease"
	}
	switch p := h.Process; {
	case h.Client != "latchkey":
	case p == nil:
		s += " (no process record)"
	case !p.Fresh():
		s += " (process silent " + rounded(p.AgeMs) + ")"
	}
	return s
}

// waitersCell shows how many wait: queued, and the clients listening on
// the shared channel (+N listening), where waiters without an entry wait.
func waitersCell(st *State) string {
	s := fmt.Sprint(len(st.Queue))
	if d := dead(st); d > 0 {
		s += fmt.Sprintf(" (%d dead)", d)
	}
	if n := st.Subscribers; n != nil && *n > 0 {
		s += fmt.Sprintf(" +%d listening", *n)
	}
	return s
}

// value shows a state's number: permits, count, or a lock's fencing
// token: its holder's, or for a lock that no latchkey owner holds, the
// counter (the latest token drawn).
func value(st *State) string {
	switch {
	case st.Kind == kindCounter:
		return fmt.Sprintf("value=%d", *st.Permits)
	case st.PermitsTotal != nil:
		return fmt.Sprintf("permits=%d/%d", *st.Permits, *st.PermitsTotal)
	case st.Permits != nil:
		return fmt.Sprintf("permits=%d", *st.Permits)
	case st.Count != nil:
		return fmt.Sprintf("count=%d", *st.Count)
	}
	for _, h := range st.Holders {
		if h.Token != nil {
			return fmt.Sprintf("token=%d", *h.Token)
		}
	}
	if st.Token != nil {
		return fmt.Sprintf("counter=%d", *st.Token)
	}
	return "-"
}
