package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeReport writes report.md and its SVG charts into dir.
func writeReport(dir string, rep *Report) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	color := map[string]string{}
	for i, im := range rep.Impls {
		color[im.Name] = palette[i%len(palette)]
	}
	files := map[string]string{}

	p("# latchkey benchmark\n\n")
	if rep.Note != "" {
		p("> **%s**\n\n", rep.Note)
	}
	p("- When: %s\n- Command: `%s`\n- Machine: %s, %s\n- Redis: %s (%s)\n", rep.When.Format("2006-01-02 15:04 MST"),
		rep.Command, rep.Machine, rep.GoVersion, rep.Server, rep.Mode)
	p("- Each impl ran %s per scenario, in %d interleaved rounds (every impl once per round, in turn), "+
		"against the same server with the same parameters; every worker has its own go-redis client.\n\n",
		rep.Duration, rep.Rounds)
	if rep.Violations == 0 {
		p("**Mutual exclusion violations: 0** (holders gauge, every scenario and impl).\n\n")
	} else {
		p("## !!! MUTUAL EXCLUSION VIOLATIONS: %d !!!\n\n", rep.Violations)
	}

	p("## Targets for %s\n\nReported, never asserted.\n\n| status | target | want | got | margin |\n|---|---|---|---|---|\n", targetImpl)
	for _, t := range rep.Targets {
		p("| **%s** | %s | %s | %s | %s |\n", t.Status, t.Name, t.Want, t.Got, t.Margin)
	}

	p("\n## Implementations\n\n| impl | configuration |\n|---|---|\n")
	for _, im := range rep.Impls {
		p("| %s | %s |\n", im.Name, im.About)
	}
	p("\nredsync has no blocking Lock: it polls with a random 50-250ms delay and gives up after its tries. " +
		"It is shown twice: with tries raised (how a user gets a blocking lock) and with its defaults (whose " +
		"give-ups are counted; a default Lock only gives up after about 5s of trying, so short rounds rarely " +
		"show any). bsm/redislock tries once unless given a retry strategy; both a fast linear poll (lowest " +
		"latency a poller can get, at the price of load on Redis) and the exponential backoff its docs " +
		"recommend are shown, because neither alone is what every user picks.\n")

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
		cols := columnsFor(si.scen)
		p("| impl |")
		for _, c := range cols {
			p(" %s |", c.head)
		}
		p("\n|---|%s\n", strings.Repeat("---|", len(cols)))
		var (
			ss        []series
			thr, util []bar
			below     []string
		)
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
			if si.scen.Contended {
				thr = append(thr, bar{r.Impl, r.PerSecond, fmt.Sprintf("%.0f/s", r.PerSecond), color[r.Impl]})
				util = append(util, bar{r.Impl, r.Utilization * 100, fmt.Sprintf("%.1f%%", r.Utilization*100), color[r.Impl]})
			}
			ss = append(ss, series{r.Impl, color[r.Impl], r.WaitHist})
		}
		if len(below) > 0 {
			p("\n%s\n", strings.Join(below, "\n"))
		}
		for _, r := range rs {
			if r.FirstError != "" {
				p("\nFirst error of %s: `%s`\n", r.Impl, r.FirstError)
			}
		}
		if si.scen.Table == tableCustom {
			continue
		}
		what := "latency"
		if si.Name == "uncontended" {
			what = "Lock+Unlock round trip"
		}
		if si.scen.Contended {
			what = "wait: Lock call to Lock return"
		}
		name := "dist-" + si.Name + ".svg"
		files[name] = distChart(si.Name+": "+what, what, ss)
		p("\n![%s distribution](%s)\n", si.Name, name)
		if si.scen.Contended {
			name = "throughput-" + si.Name + ".svg"
			files[name] = barChart(si.Name+": acquisitions per second", thr, 0, 0, "")
			p("\n![%s throughput](%s)\n", si.Name, name)
			name = "utilization-" + si.Name + ".svg"
			files[name] = barChart(si.Name+": lock utilization (time held / wall time)", util, 100, 90, "target 90%")
			p("\n![%s utilization](%s)\n", si.Name, name)
		}
	}
	p("%s", method)
	files["report.md"] = b.String()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

const method = `
## How it is measured

- **Workers** are goroutines of one process, each with its own go-redis client (and, for latchkey, its own
  pub/sub Hub), as separate processes would be. Their clocks are therefore one clock.
- **Wait** runs from the Lock call to its return. **Held** runs from Lock's return to Unlock's return: both
  ends lag the server by about half a round trip, so the length matches the time the server saw the lock
  held. **Utilization** is the union of held intervals over the run's wall time.
- **Handoff gap** (exclusive locks) runs from an Unlock return to the next Lock return, counted only when
  some worker was already waiting at that release: time the lock sat free while wanted. With several
  permits, utilization is permit-time used over wall time × permits.
- **Mutual exclusion** is checked with a holders gauge entered after Lock returns and left before Unlock is
  called; any overlap beyond what the primitive allows is a violation.
- **Round trips per acquisition** are the commands the worker clients sent (counted by a go-redis hook;
  an EVALSHA is one) plus the SUBSCRIBE/UNSUBSCRIBE and health-check PINGs of pub/sub connections, which
  bypass hooks and are taken from INFO commandstats. **Commands per acquisition** are every call INFO
  commandstats counted, including the commands Lua scripts run. Connection setup (HELLO, CLIENT SETINFO)
  and the suite's own INFO and PING probes are left out of both.
- **PING round trip**: uncontended alternates a PING with each Lock+Unlock on the same client; the
  other scenarios PING every 2ms on a separate client during the run, so the yardstick carries the
  run's load (the targets also quote 100 PINGs taken on the idle server just before each run).
- **Per-worker min / max** are the fewest and most acquisitions any one worker made (fairness).
- **Give-ups** are Locks that returned on their own without the lock (tries exhausted, own deadline);
  Locks cut short by the end of a run are not counted.
`
