package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestImplColorsUnique(t *testing.T) {
	seen := map[string]string{}
	for _, im := range impls {
		if other, ok := seen[im.Color]; ok {
			t.Errorf("%s and %s share colour %s", im.Name, other, im.Color)
		}
		seen[im.Color] = im.Name
	}
}

func TestAxisTicksRound(t *testing.T) {
	for _, tc := range []struct {
		max  float64
		want string
	}{
		{687, "0 200 400 600 800"},
		{100, "0 20 40 60 80 100"},
		{23051, "0 5,000 10,000 15,000 20,000 25,000"},
		{0.34, "0 0.1 0.2 0.3 0.4"},
	} {
		a := linearAxis(tc.max, 0, 100, trimNum)
		var got []string
		for _, v := range a.ticks() {
			got = append(got, a.label(v))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ticks up to %v: %q, want %q", tc.max, strings.Join(got, " "), tc.want)
		}
	}
	a := logAxis(0.2, 1.5, 0, 100, durLabel)
	var got []string
	for _, v := range a.ticks() {
		got = append(got, a.label(v))
	}
	if want := "100µs 200µs 500µs 1ms 2ms 5ms 10ms"; strings.Join(got, " ") != want {
		t.Errorf("log ticks %q, want %q", strings.Join(got, " "), want)
	}
}

func TestDurLabel(t *testing.T) {
	for ms, want := range map[float64]string{0.608192: "608µs", 12.1: "12.1ms", 219.24: "219ms", 1.4582: "1.46ms", 2500: "2.5s", 0.01: "10µs"} {
		if got := durLabel(ms); got != want {
			t.Errorf("durLabel(%v) = %q, want %q", ms, got, want)
		}
	}
}

func TestBarChart(t *testing.T) {
	one := []bar{{label: "latchkey", value: 10, color: "#000"}}
	if svg := barChart(barSpec{title: "t", bars: one, tick: trimNum}); svg != "" {
		t.Error("a chart of a single bar was drawn")
	}
	two := append(one, bar{label: "redsync", value: 5, color: "#111"})
	m := mark{scenario: "hotlock", chart: "acq/s", value: 15, label: "latchkey target >= 15/s"}
	svg := barChart(barSpec{title: "t", bars: two, tick: trimNum, marks: []mark{m}, mini: true})
	for _, want := range []string{"latchkey target &gt;= 15/s", "NOT COMPARABLE", "stroke-dasharray"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if svg := barChart(barSpec{title: "t", bars: two, tick: trimNum}); strings.Contains(svg, "NOT COMPARABLE") ||
		strings.Contains(svg, "stroke-dasharray") {
		t.Error("a chart of a real server without targets has a miniredis mark or a target line")
	}
}

func TestCCDFChart(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 1000; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	svg := ccdfChart("t", "wait", []curve{{"latchkey", "#1f77b4", s}}, false)
	for _, want := range []string{"1ms", "1s", "100%", "0.1%", "#1f77b4", "p99 990ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func TestMarks(t *testing.T) {
	res := []*Result{
		{Scenario: "hotlock", Impl: "latchkey", Acquisitions: 10, PerSecond: 300},
		{Scenario: "hotlock", Impl: "redsync", Acquisitions: 10, PerSecond: 100},
		{Scenario: "hotlock", Impl: "redislock-linear", Acquisitions: 10, PerSecond: 150},
	}
	g := goal{scenario: "hotlock", impl: targetImpl, metric: mRate, atLeast: true, bound: 1.5, versus: peers}
	tg := g.eval(res)
	if tg.Status != "PASS" || !strings.Contains(tg.Got, "redislock-linear 150/s: 2.00×") {
		t.Errorf("target %+v", tg)
	}
	ts := []Target{tg}
	if ms := marks(ts, "hotlock", "acq/s"); len(ms) != 1 || ms[0].value != 225 {
		t.Errorf("marks %+v, want one at 225", ms)
	}
	if len(marks(ts, "hotlock-many", "acq/s")) != 0 || len(marks(ts, "hotlock", "util")) != 0 {
		t.Error("a target was drawn on a chart it does not apply to")
	}
	if tg := g.eval(res[:1]); tg.Status != "n/a" {
		t.Errorf("target without peers: %+v", tg)
	}
}

func TestFromRoot(t *testing.T) {
	// go test runs in bench/, as "go -C bench run ." does.
	if got, want := fromRoot(filepath.Join("out", "report.md")), filepath.Join("bench", "out", "report.md"); got != want {
		t.Errorf("fromRoot = %q, want %q", got, want)
	}
	dir := t.TempDir()
	if got := fromRoot(dir); got != dir {
		t.Errorf("fromRoot(%q) = %q, want it absolute", dir, got)
	}
	if _, err := os.Stat("../go.mod"); err != nil {
		t.Skip("not in the repository")
	}
}
