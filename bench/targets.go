package main

import (
	"fmt"
	"strings"
)

// A Target is one of the issues' goals for latchkey as this run measured
// it: reported, never asserted.
type Target struct {
	Issue  int    `json:"issue"`
	Name   string `json:"name"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	Status string `json:"status"` // PASS, MISS or n/a
	Margin string `json:"margin,omitempty"`
	// mark, if set, draws the bound on the chart of its scenario and metric.
	mark *mark
}

// A mark is a target's bound drawn as a line on one chart.
type mark struct {
	scenario, chart string
	value           float64
	label           string
}

// targetImpl is the family the targets are about.
const targetImpl = "latchkey"

// A metric is a figure of a Result that a goal bounds.
type metric struct {
	name  string // "wait p99"
	chart string // the chart that shows it ("acq/s", "util", "handoff", "cpu"), or ""
	get   func(*Result) (float64, bool)
	fmt   func(float64) string
}

// A goal is a row of the targets table: a bound on a metric of one impl in
// one scenario, absolute or a factor of the best of other impls' figures
// in the same scenario and run.
type goal struct {
	issue    int
	scenario string
	impl     string
	metric   metric
	atLeast  bool    // the figure must be >= the bound, else <=
	within   bool    // the figure must lie in [1/bound, bound]: within a factor of 1
	bound    float64 // the bound, or the factor when versus is set
	versus   []string
	note     string // where the bound comes from, said in Want
}

func (g goal) name() string {
	s := g.scenario + " " + g.metric.name
	if g.impl != targetImpl {
		s += " (" + g.impl + ")"
	}
	return s
}

func (g goal) op() string {
	if g.atLeast {
		return ">="
	}
	return "<="
}

// eval measures g against results.
func (g goal) eval(results []*Result) Target {
	t := Target{Issue: g.issue, Name: g.name(), Status: "n/a"}
	switch {
	case g.within:
		t.Want = fmt.Sprintf("within %s–%s", g.metric.fmt(1/g.bound), g.metric.fmt(g.bound))
	case g.versus == nil:
		t.Want = fmt.Sprintf("%s %s", g.op(), g.metric.fmt(g.bound))
	default:
		t.Want = fmt.Sprintf("%s %.4g× %s's", g.op(), g.bound, g.versus[0])
		if len(g.versus) > 1 {
			t.Want = fmt.Sprintf("%s %.4g× the best of %s", g.op(), g.bound, strings.Join(g.versus, ", "))
		}
	}
	if g.note != "" {
		t.Want += " (" + g.note + ")"
	}
	r := find(results, g.scenario, g.impl)
	if r == nil {
		t.Got = "not run"
		return t
	}
	v, ok := g.metric.get(r)
	if !ok {
		t.Got = "unknown on this server"
		return t
	}
	t.Got = g.metric.fmt(v)
	limit := g.bound
	if g.versus != nil {
		ref, who, ok := g.best(results)
		if !ok {
			t.Got += " (no peer ran)"
			return t
		}
		limit = g.bound * ref
		t.Got += fmt.Sprintf(" vs %s %s: %.2f×", who, g.metric.fmt(ref), v/ref)
	}
	pass := v <= limit
	margin := limit - v
	if g.atLeast {
		pass, margin = v >= limit, v-limit
	}
	t.Status = status(pass)
	if limit != 0 {
		t.Margin = fmt.Sprintf("%+.0f%%", margin/limit*100)
	}
	if g.within { // the margin to the nearer bound
		lo := 1 / limit
		pass = v >= lo && v <= limit
		t.Status, t.Margin = status(pass), fmt.Sprintf("%+.0f%%", min((v-lo)/lo, (limit-v)/limit)*100)
	}
	if g.metric.chart != "" {
		t.mark = &mark{scenario: g.scenario, chart: g.metric.chart, value: limit,
			label: fmt.Sprintf("%s target %s %s", g.impl, g.op(), g.metric.fmt(limit))}
	}
	return t
}

// best returns the best figure among g.versus in g's scenario: the highest
// when g wants at least a factor of it, else the lowest.
func (g goal) best(results []*Result) (float64, string, bool) {
	var (
		best  float64
		who   string
		found bool
	)
	for _, name := range g.versus {
		r := find(results, g.scenario, name)
		if r == nil {
			continue
		}
		v, ok := g.metric.get(r)
		if !ok || v <= 0 {
			continue
		}
		if !found || (g.atLeast && v > best) || (!g.atLeast && v < best) {
			best, who, found = v, name, true
		}
	}
	return best, who, found
}

func find(results []*Result, scenario, impl string) *Result {
	for _, r := range results {
		if r.Scenario == scenario && r.Impl == impl && r.Acquisitions > 0 {
			return r
		}
	}
	return nil
}

func status(pass bool) string {
	if pass {
		return "PASS"
	}
	return "MISS"
}

// evalTargets checks every goal, after the one that holds for every impl:
// no mutual exclusion violation.
func evalTargets(results []*Result) []Target {
	viol := 0
	for _, r := range results {
		viol += r.Violations
	}
	out := []Target{{Name: "mutual exclusion, every scenario and impl", Want: "0 violations",
		Got: fmt.Sprintf("%d violations", viol), Status: status(viol == 0)}}
	for _, g := range goals {
		out = append(out, g.eval(results))
	}
	return out
}

// marks returns the bounds to draw on the chart of scenario.
func marks(targets []Target, scenario, chart string) []mark {
	var out []mark
	for _, t := range targets {
		if t.mark != nil && t.mark.scenario == scenario && t.mark.chart == chart {
			out = append(out, *t.mark)
		}
	}
	return out
}
