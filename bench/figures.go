package main

import "fmt"

// A figure is one chart of a scenario, as a file beside report.md.
type figure struct {
	file, alt, svg string
}

// figuresFor returns the charts of one scenario's results: the
// distribution of its waits (or latencies), then bar charts of the figures
// that compare impls. Bar charts with a single bar are left out; targets
// are drawn only on the chart of the scenario and figure they bound.
func figuresFor(rep *Report, si scenInfo, rs []*Result) []figure {
	sc := si.scen
	var ok []*Result
	for _, r := range rs {
		if r.Failed == "" && r.Acquisitions > 0 {
			ok = append(ok, r)
		}
	}
	color := map[string]string{}
	for _, im := range rep.Impls {
		color[im.Name] = im.Color
	}
	var out []figure
	add := func(kind, alt, svg string) {
		if svg != "" {
			out = append(out, figure{fmt.Sprintf("%s-%s.svg", kind, si.Name), alt, svg})
		}
	}
	bars := func(value func(*Result) (float64, float64, string)) []bar {
		var bs []bar
		for _, r := range ok {
			v, inner, text := value(r)
			bs = append(bs, bar{label: r.Impl, text: text, color: color[r.Impl], value: v, inner: inner})
		}
		return bs
	}
	spec := func(title, chart string, bs []bar) barSpec {
		return barSpec{title: si.Name + ": " + title, bars: bs, tick: trimNum, mini: rep.Mini,
			marks: marks(rep.Targets, si.Name, chart)}
	}

	if sc.Table == tableCustom {
		if si.Name == "watchdog" {
			s := spec("renewal round trips per renewal period", "renewals", bars(func(r *Result) (float64, float64, string) {
				v := r.Extra["round trips per period"]
				return v, 0, fmt.Sprintf("%.0f", v)
			}))
			add("renewals", "renewal round trips", barChart(s))
		}
		if si.Name == "election" {
			series, charts := electionCharts()
			for i, name := range series {
				s := spec(name+": p50, from the fault (or Resign call) to the successor's Campaign return", charts[i],
					onlyPositive(bars(func(r *Result) (float64, float64, string) {
						d := r.Series[name]
						return d.P50, 0, fmt.Sprintf("p50 %s, max %s (n=%d)", durLabel(d.P50), durLabel(d.Max), d.N)
					})))
				s.tick = durLabel
				add(charts[i], name, barChart(s))
			}
		}
		return out
	}

	what := "latency: one operation"
	switch {
	case sc.Contended:
		what = "wait: Lock call to Lock return"
	case si.Name == "latch":
		what = "CountDown call to each waiter's release"
	case sc.Kinds != nil:
		what = "Lock+Unlock, call to return"
	}
	var cs []curve
	for _, r := range ok {
		cs = append(cs, curve{r.Impl, color[r.Impl], r.samples})
	}
	add("dist", "distribution", ccdfChart(si.Name+": "+what, what, cs, rep.Mini))

	if !sc.Contended {
		add("throughput", "throughput", barChart(spec("operations per second", "ops/s",
			bars(func(r *Result) (float64, float64, string) { return r.PerSecond, 0, fmt.Sprintf("%.0f/s", r.PerSecond) }))))
		cpu := spec("server CPU µs per operation (INFO cpu; /proc for a peer)", "cpu",
			bars(func(r *Result) (float64, float64, string) {
				return r.CPUUsPerAcq, 0, fmt.Sprintf("%.1fµs", r.CPUUsPerAcq)
			}))
		cpu.bars = onlyPositive(cpu.bars)
		add("cpu", "server CPU per operation", barChart(cpu))
		return out
	}
	add("throughput", "throughput", barChart(spec("acquisitions per second", "acq/s",
		bars(func(r *Result) (float64, float64, string) { return r.PerSecond, 0, fmt.Sprintf("%.0f/s", r.PerSecond) }))))
	util := spec("lock utilization (time held / wall time)", "util",
		bars(func(r *Result) (float64, float64, string) {
			return r.Utilization * 100, r.UserUtilization * 100,
				fmt.Sprintf("%.1f%% srv, %.1f%% user", r.Utilization*100, r.UserUtilization*100)
		}))
	util.floor, util.tick = 100, pctLabel
	util.note = "bar: server-side (Lock return to Unlock return); thin dark bar: user-side (Lock return to Unlock call)"
	add("utilization", "utilization", barChart(util))
	hand := spec("handoff p50: Unlock call to the next waiter's Lock return", "handoff",
		bars(func(r *Result) (float64, float64, string) { return r.Handoff.P50, 0, durLabel(r.Handoff.P50) }))
	hand.log, hand.tick = true, durLabel
	hand.bars = onlyPositive(hand.bars)
	add("handoff", "handoff", barChart(hand))
	return out
}

func onlyPositive(bs []bar) []bar {
	var out []bar
	for _, b := range bs {
		if b.value > 0 {
			out = append(out, b)
		}
	}
	return out
}
