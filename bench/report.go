package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeReport writes report.md and its SVG charts into dir and returns how
// many charts it wrote.
func writeReport(dir string, rep *Report) (int, error) {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	var figs []figure

	p("# latchkey benchmark\n\n")
	if rep.Note != "" {
		p("> **%s**\n\n", rep.Note)
	}
	p("- When: %s\n- Command: `%s`\n- Machine: %s, %s\n- Redis: %s (%s)\n", rep.When.Format("2006-01-02 15:04 MST"),
		rep.Command, rep.Machine, rep.GoVersion, rep.Server, rep.Mode)
	if len(rep.Peers) > 0 {
		p("- Peers: %s\n", strings.Join(rep.Peers, ", "))
	}
	p("- Each impl ran %s per scenario, in %d interleaved rounds (every impl once per round, in turn), "+
		"against the same server with the same parameters; every worker has its own client.\n",
		rep.Duration, rep.Rounds)
	for _, n := range rep.Notes {
		p("- Note: %s\n", n)
	}
	if rep.Violations == 0 {
		p("\n**Mutual exclusion violations: 0** (holders gauge, every scenario and impl).\n\n")
	} else {
		p("\n## !!! MUTUAL EXCLUSION VIOLATIONS: %d !!!\n\n", rep.Violations)
	}

	p("## Targets for %s\n\nFrom issues 5, 12, 13, 18, 20 and 33; reported, never asserted. Margin: how far inside (+) or "+
		"outside (−) the bound the figure is, relative to the bound.\n\n", targetImpl)
	p("| status | issue | target | want | got | margin |\n|---|---|---|---|---|---|\n")
	for _, t := range rep.Targets {
		issue := "-"
		if t.Issue > 0 {
			issue = fmt.Sprint(t.Issue)
		}
		p("| **%s** | %s | %s | %s | %s | %s |\n", t.Status, issue, t.Name, t.Want, t.Got, t.Margin)
	}

	p("\n## Implementations\n\n| impl | chart colour | configuration |\n|---|---|---|\n")
	for _, im := range rep.Impls {
		p("| %s | `%s` | %s |\n", im.Name, im.Color, im.About)
	}
	p("\n%s\n", aboutPeers)

	for _, si := range rep.Scenarios {
		p("\n## %s\n\n%s\n\n", si.Name, si.About)
		var rs []*Result
		for _, r := range rep.Results {
			if r.Scenario == si.Name {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			p("No selected impl runs this scenario.\n")
			continue
		}
		writeScenarioTable(&b, si, rs)
		for _, f := range figuresFor(rep, si, rs) {
			figs = append(figs, f)
			p("\n![%s: %s](%s)\n", si.Name, f.alt, f.file)
		}
	}
	p("%s", method)
	for _, f := range figs {
		if err := os.WriteFile(filepath.Join(dir, f.file), []byte(f.svg), 0o644); err != nil {
			return 0, err
		}
	}
	return len(figs), os.WriteFile(filepath.Join(dir, "report.md"), []byte(b.String()), 0o644)
}

// writeScenarioTable writes a scenario's results as a Markdown table, with
// the notes and first errors under it.
func writeScenarioTable(b *strings.Builder, si scenInfo, rs []*Result) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	if si.scen.Rows != nil {
		var ok []*Result
		for _, r := range rs {
			if r.Failed != "" {
				p("- %s failed: %s\n", r.Impl, r.Failed)
				continue
			}
			ok = append(ok, r)
		}
		heads, rows := si.scen.Rows(ok)
		p("| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
		for _, row := range rows {
			p("| %s |\n", strings.Join(row, " | "))
		}
		return
	}
	cols := columnsFor(si.scen)
	p("| impl |")
	for _, c := range cols {
		p(" %s |", c.head)
	}
	p("\n|---|%s\n", strings.Repeat("---|", len(cols)))
	var below []string
	for _, r := range rs {
		if r.Failed != "" {
			p("| %s | failed: %s |\n", r.Impl, r.Failed)
			continue
		}
		p("| %s |", r.Impl)
		for _, c := range cols {
			p(" %s |", c.cell(r))
		}
		p("\n")
		for _, n := range notes(si.scen, r, 12) {
			below = append(below, fmt.Sprintf("- %s: %s", r.Impl, n))
		}
	}
	if len(below) > 0 {
		p("\n%s\n", strings.Join(below, "\n"))
	}
	for _, r := range rs {
		if r.FirstError != "" {
			p("\nFirst error of %s: `%s`\n", r.Impl, r.FirstError)
		}
	}
}

const aboutPeers = `redsync has no blocking Lock: it polls with a random 50-250ms delay and gives up after its tries. ` +
	`It is shown twice: with tries raised (how a user gets a blocking lock) and with its defaults (whose ` +
	`give-ups are counted; a default Lock only gives up after about 5s of trying, so short rounds rarely ` +
	`show any). bsm/redislock tries once unless given a retry strategy; both a fast linear poll (lowest ` +
	`latency a poller can get, at the price of load on Redis) and the exponential backoff its docs ` +
	`recommend are shown, because neither alone is what every user picks. wakeretry is not a library: it is ` +
	`the simplest lock that sleeps on pub/sub, written in the bench as a yardstick (×floor in the tables). ` +
	`redisson is not a Go library either: it is Redisson's RLock protocol (its scripts, unlock latch and ` +
	`wait) sent as its Java client sends it, emulated in the bench from the protocol reference, so that ` +
	`latchkey, which keeps Redisson's layout, is measured against the protocol it replaces; its client CPU ` +
	`is the emulation's, not a JVM's. ` +
	`etcd and postgres run on servers of their own, so their Redis columns (cmds, srv µs) are n/a; their RT ` +
	`counts requests to their own server and CPU µs is their server process's.`

const method = `
## How it is measured

- **Workers** are goroutines of one process, each with its own client (and, for latchkey, its own
  pub/sub Hub), as separate processes would be. Their clocks are therefore one clock.
- **Wait** runs from the Lock call to its return. **Utilization** comes in two views: **util srv** is the
  union of [Lock return, Unlock return] over the run's wall time (both ends lag the server by about half a
  round trip, so its length matches the time the server saw the lock held), and **util user** is the union
  of [Lock return, Unlock call]: the time some worker was inside the critical section. With several
  permits both are permit-time over wall time × permits.
- **Handoff gap** (exclusive locks) runs from an **Unlock call** to the next Lock return, counted only when
  some worker was already waiting at that call: the time the lock was not used while wanted, the release's
  own round trip included. **×RTT** divides its p50 by the PING p50, **×floor** by the p50 of wakeretry,
  the wake-and-retry yardstick, in the same scenario and run.
- **Mutual exclusion** is checked with a holders gauge entered after Lock returns and left before Unlock is
  called; any overlap beyond what the primitive allows is a violation.
- **Round trips per acquisition** (RT) are the commands the worker clients sent (counted by a go-redis hook;
  an EVALSHA is one) plus the SUBSCRIBE/UNSUBSCRIBE and health-check PINGs of pub/sub connections, which
  bypass hooks and are taken from INFO commandstats; for etcd, the gRPC requests and stream messages sent;
  for postgres, the queries. **Commands per acquisition** are every call INFO commandstats counted,
  including the commands Lua scripts run, and **srv µs** their time (commandstats usec). **CPU µs** is
  the server's CPU time per acquisition: INFO cpu's used_cpu_user + used_cpu_sys for Redis (summed over
  every server of the scenario), /proc for a peer's server and its children. Connection setup (HELLO,
  CLIENT SETINFO) and the suite's own INFO and PING probes are left out. **cli µs** is the client side's:
  the bench process's CPU time (getrusage RUSAGE_SELF, user + system) over the run per acquisition; it
  holds every worker's client and the bench's own bookkeeping (and, on miniredis, the server).
- **Records** (Redis impls): when a run's window closes, before its clients are closed, the keys of the
  run's own names matching latchkey_once:* (latchkey's request records) and redisson_unlock_latch:*
  (Redisson's unlock latches) are counted with SCAN MATCH on every server of the scenario, and **rec KB**
  is their MEMORY USAGE: summed over every key up to 1,000 of a kind per server, above that the mean of
  1,000 keys spread over the scan times the count (marked ~). Both are the mean over the rounds. The
  redisson emulation sends each latch's DEL in front of its next command, so each handle's last latch
  is still alive then, as the Java client's last DEL would still be on its way.
- **PING round trip**: uncontended alternates a PING with each Lock+Unlock on the same client; the
  contended scenarios PING every 2ms on a separate client during the run, so the yardstick carries the
  run's load (the targets also quote 100 PINGs taken on the idle server just before each run).
- **Per-worker min / max** are the fewest and most acquisitions any one worker made (fairness).
- **Give-ups** are Locks that returned on their own without the lock (tries exhausted, own deadline);
  Locks cut short by the end of a run are not counted.
- **Charts**: waits and latencies are drawn as the share of samples at least as long as x, on log axes,
  so that long tails show; each impl has one colour in every chart; a target's bound is a dashed red line
  on the chart of the scenario and figure it applies to; a run on miniredis is marked NOT COMPARABLE on
  every chart.
`
