package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeRows prints a scenario's own table (Scenario.Rows), then the
// failures of its impls.
func writeRows(w io.Writer, sc *Scenario, results []*Result) {
	var rs []*Result
	for _, r := range results {
		if r.Scenario != sc.Name {
			continue
		}
		if r.Failed != "" {
			fmt.Fprintf(w, "%s FAILED: %s\n", r.Impl, r.Failed)
			continue
		}
		rs = append(rs, r)
	}
	heads, rows := sc.Rows(rs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

// writeTable prints the results, the targets and the violation count.
func writeTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "latchkey bench: Redis %s (%s), %s, %s per scenario per impl in %d rounds\n",
		rep.Server, rep.Mode, rep.Machine, rep.Duration, rep.Rounds)
	if rep.Note != "" {
		fmt.Fprintf(w, "\n*** %s ***\n", rep.Note)
	}
	if len(rep.Peers) > 0 {
		fmt.Fprintf(w, "peers: %s\n", strings.Join(rep.Peers, ", "))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, si := range rep.Scenarios {
		fmt.Fprintf(w, "\n== %s: %s\n", si.Name, si.About)
		if si.scen.Rows != nil {
			writeRows(w, si.scen, rep.Results)
			continue
		}
		cols := columnsFor(si.scen)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		heads := []string{"impl"}
		for _, c := range cols {
			heads = append(heads, c.head)
		}
		fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
		var below []string
		for _, r := range rep.Results {
			if r.Scenario != si.Name {
				continue
			}
			if r.Failed != "" {
				fmt.Fprintf(tw, "%s\tFAILED: %s\t\n", r.Impl, r.Failed)
				continue
			}
			cells := []string{r.Impl}
			for _, c := range cols {
				cells = append(cells, c.cell(r))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
			for _, n := range notes(si.scen, r, 6) {
				below = append(below, fmt.Sprintf("  %-20s %s", r.Impl, n))
			}
		}
		tw.Flush()
		for _, line := range below {
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintln(w, "\nTimes in ms. RT = client round trips (commands the clients sent; an EVALSHA is one);")
	fmt.Fprintln(w, "cmds = every command INFO commandstats counted, including those run inside Lua scripts;")
	fmt.Fprintln(w, "srv µs = server time in commands per acquisition (commandstats usec); CPU µs = server CPU time")
	fmt.Fprintln(w, "per acquisition (INFO cpu; /proc for a peer). util srv / user = lock held as the server saw it /")
	fmt.Fprintln(w, "inside the critical section. Handoff runs from the Unlock call. ×RTT = p50 / PING p50;")
	fmt.Fprintln(w, "×floor = handoff p50 / wakeretry's (the wake-and-retry yardstick) in the same scenario.")
	fmt.Fprintln(w, "cli µs = the bench process's CPU time per acquisition (getrusage: user+sys, all its clients).")
	fmt.Fprintln(w, "records, rec KB = the run's request records (latchkey_once:*) and Redisson unlock latches")
	fmt.Fprintln(w, "(redisson_unlock_latch:*) alive at its end, and their MEMORY USAGE (~: from a sample); Redis only.")
	for _, r := range rep.Results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "first error, %s/%s: %s\n", r.Scenario, r.Impl, r.FirstError)
		}
	}
	fmt.Fprintf(w, "\nTargets for %s (reported, not asserted):\n", targetImpl)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range rep.Targets {
		issue := ""
		if t.Issue > 0 {
			issue = fmt.Sprintf("#%d", t.Issue)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\twant %s\tgot %s\t%s\n", t.Status, issue, t.Name, t.Want, t.Got, t.Margin)
	}
	tw.Flush()
	if rep.Violations == 0 {
		fmt.Fprintln(w, "\nMutual exclusion violations: 0")
	} else {
		fmt.Fprintf(w, "\n!!!!!!!! MUTUAL EXCLUSION VIOLATIONS: %d !!!!!!!!\n", rep.Violations)
	}
	if rep.Note != "" {
		fmt.Fprintf(w, "*** %s ***\n", rep.Note)
	}
}
