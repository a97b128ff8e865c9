package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

// A profile as callgrind writes it: compressed names, serverCron called
// from two places (the second by its id alone), and a callee of its own
// whose cost its calls' lines already include.
const testProfile = `# callgrind format
version: 1
positions: line
events: Ir
summary: 1100

ob=(1) /usr/bin/redis-server
fl=(1) ???
fn=(1) aeMain
0 10
cfn=(2) serverCron
calls=1 0
0 300
cfn=(3) call
calls=2 0
0 500

fn=(2)
0 100
cfn=(4) cronHelper
calls=1 0
0 200

fn=(4)
+2 200

fn=(3)
* 500

fn=(5) processTimeEvents
0 40
cfn=(2)
calls=1 0
0 50

totals: 1150
`

func TestParseCallgrind(t *testing.T) {
	total, cron, err := parseCallgrind(strings.NewReader(testProfile), "serverCron")
	if err != nil || total != 1150 || cron != 350 {
		t.Errorf("parseCallgrind = %d, %d, %v; want 1150, 350, nil", total, cron, err)
	}
	if _, _, err := parseCallgrind(strings.NewReader("events: Ir\nfn=(1) main\n0 5\n"), "serverCron"); err == nil {
		t.Error("a profile without totals parsed")
	}
}

// instrResult is a result of the instructions scenario whose windows
// have the given instructions per op, by case.
func instrResult(impl string, perOp map[string][]float64) *Result {
	r := &Result{Scenario: "instructions", Impl: impl, Acquisitions: 1}
	for c, vs := range perOp {
		for i, v := range vs {
			r.Windows = append(r.Windows, Window{Case: c, Round: i + 1, Ops: 1, PerOp: v, Commands: 13,
				Sent: map[string]float64{"evalsha": 2, "unlink": 0.004}})
		}
	}
	return r
}

// The instruction targets divide latchkey's mean over the rounds by the
// RFencedLock protocol's in the same case.
func TestInstructionTargets(t *testing.T) {
	rs := []*Result{
		instrResult(targetImpl, map[string][]float64{caseKept: {150e3, 154e3}, caseOwner: {145e3}, caseHandoff: {400e3}}),
		instrResult(instrYardstick, map[string][]float64{caseKept: {120e3, 120e3}, caseOwner: {120e3}, caseHandoff: {200e3}}),
	}
	want := map[string]string{
		caseKept:    "MISS 152.0k vs redisson-fenced 120.0k: 1.27×",
		caseNew:     "n/a unknown on this server",
		caseOwner:   "PASS 145.0k vs redisson-fenced 120.0k: 1.21×",
		caseHandoff: "MISS 400.0k vs redisson-fenced 200.0k: 2.00×",
	}
	n := 0
	for _, g := range goals {
		if g.scenario != "instructions" {
			continue
		}
		n++
		c := strings.TrimPrefix(g.metric.name, "server instructions per op, ")
		if got := g.eval(rs); got.Status+" "+got.Got != want[c] {
			t.Errorf("%s: %s %s, want %s", c, got.Status, got.Got, want[c])
		}
	}
	if n != len(instrCases) {
		t.Errorf("%d instruction targets, want one per case (%d)", n, len(instrCases))
	}
	heads, rows := instrRows(rs)
	if len(rows) != 6 || len(rows[0]) != len(heads) {
		t.Fatalf("rows %q", rows)
	}
	if got := strings.Join(rows[0], "|"); got != "kept handle|latchkey|152.0k|1.27|150.0k, 154.0k|13.00|evalsha 2, unlink 0.004" {
		t.Errorf("first row %s", got)
	}
}

// TestInstructions runs the scenario under valgrind, briefly: windows of
// 10 ops, one round. Without valgrind it is skipped; TestInstructionsSkipped
// checks the note a run gives then.
func TestInstructions(t *testing.T) {
	if why := callgrindMissing(); why != "" {
		t.Skip(why)
	}
	cfg := Config{Scenarios: "instructions", Impls: "latchkey,redisson-fenced,redisson,redislock-linear",
		Rounds: 1, InstrOps: 10, Duration: time.Second, Out: t.TempDir(), Command: "go test",
		InstrDumps: t.TempDir()}
	rep, stdout := runFor(t, cfg, 5*time.Minute)
	if len(rep.Results) != 4 || rep.Violations != 0 {
		t.Fatalf("%d results, %d violations; want 4 and 0", len(rep.Results), rep.Violations)
	}
	// Commands per Lock+Unlock, those the scripts ran included, are
	// exact: the window holds each latch DEL that Redisson's client sends
	// after its unlock once, whatever goes with which command.
	exact := map[string]float64{instrYardstick: 13, "redisson": 12, "redislock-linear": 5}
	for _, r := range rep.Results {
		if r.Failed != "" || len(r.Windows) != len(instrCases) {
			t.Errorf("%s: failed %q, %d windows", r.Impl, r.Failed, len(r.Windows))
			continue
		}
		for _, w := range r.Windows {
			if w.PerOp <= 0 || w.Cron < 0 || w.Ops != 10 {
				t.Errorf("%s: window %+v", r.Impl, w)
			}
			if want, ok := exact[r.Impl]; ok && w.Case != caseHandoff && math.Abs(w.Commands-want) > 1e-9 {
				t.Errorf("%s %s: %.2f commands per op, want %.0f", r.Impl, w.Case, w.Commands, want)
			}
		}
	}
	for _, tg := range rep.Targets {
		if tg.Issue == 33 && tg.Status == "n/a" {
			t.Errorf("target %s not evaluated: %s", tg.Name, tg.Got)
		}
	}
	if !strings.Contains(stdout, "× "+instrYardstick) {
		t.Error("stdout lacks the instructions table")
	}
	dumps, _ := filepath.Glob(filepath.Join(cfg.InstrDumps, "*.callgrind"))
	if len(dumps) != 4*len(instrCases) {
		t.Errorf("%d profiles kept, want %d", len(dumps), 4*len(instrCases))
	}
}

// Without valgrind the scenario is skipped with a note, and its targets
// are n/a.
func TestInstructionsSkipped(t *testing.T) {
	dir := t.TempDir()
	mini := true
	if path, err := exec.LookPath(redistest.Binary); err == nil {
		if err := os.Symlink(path, filepath.Join(dir, redistest.Binary)); err != nil {
			t.Fatal(err)
		}
		mini = false
	}
	t.Setenv("PATH", dir)
	cfg := Config{Scenarios: "instructions", Impls: "latchkey,redisson-fenced", Rounds: 1, Duration: time.Second,
		Mini: mini, Command: "go test"}
	var stdout, stderr bytes.Buffer
	rep, err := run(context.Background(), cfg, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 0 || len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], "skipped scenario instructions: ") {
		t.Errorf("%d results, notes %q", len(rep.Results), rep.Notes)
	}
	if !mini && !strings.Contains(rep.Notes[0], "valgrind is not installed") {
		t.Errorf("note %q does not say valgrind is missing", rep.Notes[0])
	}
	for _, tg := range rep.Targets {
		if tg.Issue == 33 && tg.Status != "n/a" {
			t.Errorf("target %s: %s", tg.Name, tg.Status)
		}
	}
}
