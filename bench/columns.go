package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A column is one figure of a results table, shared by the stdout table and
// the Markdown report.
type column struct {
	head string
	cell func(r *Result) string
}

var (
	lockColumns = []column{
		{"acq/s", func(r *Result) string { return fmt.Sprintf("%.0f", r.PerSecond) }},
		{"util srv", func(r *Result) string { return pctf(r.Utilization) }},
		{"util user", func(r *Result) string { return pctf(r.UserUtilization) }},
		{"wait p50", func(r *Result) string { return msf(r.Wait.P50) }},
		{"p99", func(r *Result) string { return msf(r.Wait.P99) }},
		{"max", func(r *Result) string { return msf(r.Wait.Max) }},
		{"handoff p50", func(r *Result) string { return msf(r.Handoff.P50) }},
		{"p99", func(r *Result) string { return msf(r.Handoff.P99) }},
		{"×RTT", func(r *Result) string { return ratio(r.HandoffRTT, 1) }},
		{"×floor", func(r *Result) string { return ratio(r.HandoffVsFloor, 2) }},
		{"fair min/max", func(r *Result) string { return fmt.Sprintf("%d/%d", r.FairMin, r.FairMax) }},
		{"RT/acq", func(r *Result) string { return perAcq(r.RoundTripsPerAcq) }},
		{"cmds/acq", func(r *Result) string { return perAcq(r.CommandsPerAcq) }},
		{"srv µs", serverUs},
		{"CPU µs", func(r *Result) string { return usf(r.CPUUsPerAcq) }},
		{"cli µs", func(r *Result) string { return usf(r.ClientCPUUsPerAcq) }},
		{"records", records},
		{"rec KB", recordsKB},
		{"errors", func(r *Result) string { return fmt.Sprint(r.Errors) }},
		{"give-ups", func(r *Result) string { return fmt.Sprint(r.GiveUps) }},
		{"violations", func(r *Result) string { return violations(r.Violations) }},
	}
	latencyColumns = []column{
		{"ops/s", func(r *Result) string { return fmt.Sprintf("%.0f", r.PerSecond) }},
		{"p50", func(r *Result) string { return msf(r.Latency.P50) }},
		{"p99", func(r *Result) string { return msf(r.Latency.P99) }},
		{"max", func(r *Result) string { return msf(r.Latency.Max) }},
		{"×RTT", func(r *Result) string { return ratio(r.LatencyRTT, 2) }},
		{"PING p50", func(r *Result) string { return msf(r.Ping.P50) }},
		{"RT/op", func(r *Result) string { return perAcq(r.RoundTripsPerAcq) }},
		{"cmds/op", func(r *Result) string { return perAcq(r.CommandsPerAcq) }},
		{"srv µs", serverUs},
		{"CPU µs", func(r *Result) string { return usf(r.CPUUsPerAcq) }},
		{"cli µs", func(r *Result) string { return usf(r.ClientCPUUsPerAcq) }},
		{"records", records},
		{"rec KB", recordsKB},
		{"errors", func(r *Result) string { return fmt.Sprint(r.Errors) }},
		{"violations", func(r *Result) string { return violations(r.Violations) }},
	}
	customColumns = []column{
		{"figures", func(r *Result) string { return extraString(r.Extra) }},
		{"errors", func(r *Result) string { return fmt.Sprint(r.Errors) }},
		{"violations", func(r *Result) string { return violations(r.Violations) }},
	}
)

// serverUs is commandstats' time in commands per op: Redis only.
func serverUs(r *Result) string {
	if r.CommandsPerAcq < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", r.ServerUsPerAcq)
}

// records is how many request records and unlock latches of the run were
// alive at its end (the mean over the rounds): Redis only.
func records(r *Result) string {
	if n := r.Records.keys(); n >= 0 {
		return fmt.Sprintf("%.0f", n)
	}
	return "n/a"
}

// recordsKB is their memory in KiB (MEMORY USAGE; estimated from a sample
// when marked ~).
func recordsKB(r *Result) string {
	b := r.Records.bytes()
	if b < 0 {
		return "n/a"
	}
	if r.Records.Sampled {
		return fmt.Sprintf("~%.1f", b/1024)
	}
	return fmt.Sprintf("%.1f", b/1024)
}

func columnsFor(sc *Scenario) []column {
	switch {
	case sc.Table == tableCustom:
		return customColumns
	case sc.Contended:
		return lockColumns
	}
	return latencyColumns
}

// notes returns the lines shown under a result's row: its scenario-specific
// series and counts, and its command mix.
func notes(sc *Scenario, r *Result, mixLen int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.Series)) {
		d := r.Series[k]
		out = append(out, fmt.Sprintf("%s p50 %s, p99 %s, max %s ms (n=%d)", k, msf(d.P50), msf(d.P99), msf(d.Max), d.N))
	}
	if len(r.Extra) > 0 && sc.Table != tableCustom {
		out = append(out, extraString(r.Extra))
	}
	if len(r.CommandMix) > 0 && sc.Table != tableCustom {
		per := "acquisition"
		if !sc.Contended {
			per = "op"
		}
		out = append(out, "commands per "+per+": "+mixString(r.CommandMix, mixLen))
	}
	return out
}

func extraString(extra map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		parts = append(parts, fmt.Sprintf("%s %s", k, num(extra[k])))
	}
	return strings.Join(parts, ", ")
}

func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// mixString lists the most frequent commands per acquisition.
func mixString(mix map[string]float64, n int) string {
	names := slices.Collect(maps.Keys(mix))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(mix[b], mix[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, name := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", name, mix[name]))
	}
	if len(names) > n {
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}

func msf(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func pctf(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }

// ratio formats a ratio with prec decimals, "-" when there is none.
func ratio(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func usf(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", v)
}

func perAcq(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

func violations(n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d !!", n)
}
