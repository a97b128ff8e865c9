package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// runSuite runs every scenario and impl for d each and checks what every
// run must show, whatever the speed: no violation, no failed setup, some
// acquisitions per impl, and the report files. The scenarios under
// valgrind are left out: TestInstructions runs them.
func runSuite(t *testing.T, cfg Config) (*Report, string) {
	t.Helper()
	if cfg.Impls == "" {
		cfg.Impls = "all"
	}
	var names []string
	for _, sc := range scenarios {
		if !sc.Callgrind {
			names = append(names, sc.Name)
		}
	}
	cfg.Rounds, cfg.Scenarios, cfg.Out, cfg.Command = 2, strings.Join(names, ","), t.TempDir(), "go test"
	selected, err := selectImpls(cfg.Impls)
	if err != nil {
		t.Fatal(err)
	}
	// Generous: a loaded 2-core machine under -race needs over 2 minutes.
	rep, stdout := runFor(t, cfg, 6*time.Minute)
	if rep.Violations != 0 {
		t.Errorf("%d mutual exclusion violations", rep.Violations)
	}
	// Every scenario runs every impl of its kinds, except where the run
	// said why not: no replication or cluster on miniredis, a peer server
	// not installed.
	skipped := strings.Join(rep.Notes, "\n")
	want := 0
	for _, sc := range scenarios {
		if (sc.Replication || sc.Cluster) && rep.Mini || sc.Callgrind {
			continue
		}
		for _, im := range selected {
			if sc.runs(im) && !strings.Contains(skipped, "skipped "+im.Name+":") {
				want++
			}
		}
	}
	for _, im := range selected {
		if im.Peer != nil && !slices.ContainsFunc(rep.Impls, func(i implInfo) bool { return i.Name == im.Name }) &&
			!strings.Contains(skipped, "skipped "+im.Name+": ") {
			t.Errorf("%s neither ran nor was skipped with a note", im.Name)
		}
	}
	if len(rep.Results) != want {
		t.Errorf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		if r.Failed != "" || r.Acquisitions == 0 {
			t.Errorf("%s/%s: failed %q, %d acquisitions", r.Scenario, r.Impl, r.Failed, r.Acquisitions)
		}
		if strings.HasPrefix(r.Impl, "latchkey") && r.Errors+r.GiveUps != 0 {
			t.Errorf("%s/%s: %d errors, %d give-ups: %s", r.Scenario, r.Impl, r.Errors, r.GiveUps, r.FirstError)
		}
		if r.Scenario == "hotlock" && (r.Utilization <= 0 || r.Utilization > 1.05 ||
			r.UserUtilization <= 0 || r.UserUtilization > r.Utilization) {
			t.Errorf("%s/%s: utilization %.3f, user-side %.3f", r.Scenario, r.Impl, r.Utilization, r.UserUtilization)
		}
		if r.Scenario == "hotlock" && r.Impl == "latchkey" && r.HandoffVsFloor <= 0 {
			t.Errorf("%s/%s: no handoff against the wakeretry yardstick", r.Scenario, r.Impl)
		}
		// Records are counted on every Redis, and the client's CPU where
		// getrusage is.
		if r.Peer == "" && r.Records == nil {
			t.Errorf("%s/%s: records alive at the end not counted", r.Scenario, r.Impl)
		}
		if runtime.GOOS == "linux" && r.ClientCPUUsPerAcq < 0 {
			t.Errorf("%s/%s: no client CPU", r.Scenario, r.Impl)
		}
		// The election measured every case: the leader killed, paused,
		// cut off, and resigning.
		if r.Scenario == "election" {
			series, _ := electionCharts()
			for _, name := range series {
				if r.Series[name].N == 0 {
					t.Errorf("%s/%s: no %q measured", r.Scenario, r.Impl, name)
				}
			}
		}
		// Waiters that sleep until the unlock message always take over
		// from a release; pollers may miss every one in a short run.
		if r.Scenario == "hotlock" && r.Impl == "latchkey" && r.Handoff.N == 0 {
			t.Errorf("%s/%s: no handoff measured", r.Scenario, r.Impl)
		}
	}
	for _, name := range []string{"report.md", "results.json", "dist-hotlock.svg", "utilization-hotlock.svg",
		"throughput-hotlock-many.svg", "dist-uncontended.svg"} {
		if _, err := os.Stat(filepath.Join(cfg.Out, name)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Results) != len(rep.Results) {
		t.Errorf("results.json: %v, %d results", err, len(back.Results))
	}
	for _, s := range []string{"Targets for latchkey", "Mutual exclusion violations: 0", "hotlock-many"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q", s)
		}
	}
	return rep, stdout
}

// runFor runs the suite as cfg says, within limit, and returns its report
// and what it printed, which it logs.
func runFor(t *testing.T, cfg Config, limit time.Duration) (*Report, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	rep, err := run(ctx, cfg, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Logf("stdout:\n%s", stdout.String())
	return rep, stdout.String()
}

// TestSuite runs the whole suite briefly against a throwaway redis-server,
// or miniredis where none is installed.
func TestSuite(t *testing.T) {
	_, err := exec.LookPath("redis-server")
	rep, _ := runSuite(t, Config{Duration: 200 * time.Millisecond, Mini: err != nil})
	if err == nil {
		for _, r := range rep.Results {
			if r.Scenario == "watchdog" {
				if r.Extra["round trips per period"] <= 0 {
					t.Errorf("%s/%s: no renewal round trips: %v", r.Scenario, r.Impl, r.Extra)
				}
				continue
			}
			if (r.CommandsPerAcq <= 0 && r.Peer == "") || r.RoundTripsPerAcq <= 0 {
				t.Errorf("%s/%s: %.2f commands, %.2f round trips per acquisition",
					r.Scenario, r.Impl, r.CommandsPerAcq, r.RoundTripsPerAcq)
			}
			// Both sides of the mixed deployment got the lock: the Go
			// workers and the emulated Redisson ones, on one lock name.
			if r.Scenario == "hotlock-mixed" && (r.Series["Go wait"].N == 0 || r.Series["Java wait"].N == 0 ||
				r.Extra["Java acq/s"] <= 0 || r.Extra["Java share"] <= 0) {
				t.Errorf("%s/%s: a side not served: %v, Go %d, Java %d acquisitions", r.Scenario, r.Impl,
					r.Extra, r.Series["Go wait"].N, r.Series["Java wait"].N)
			}
			// Redisson's Lock+Unlock: two EVALSHAs and the latch's DEL, 12
			// commands with those the scripts run.
			if r.Impl == "redisson" && r.Scenario == "uncontended" &&
				(math.Abs(r.RoundTripsPerAcq-3) > 0.05 || math.Abs(r.CommandsPerAcq-12) > 0.05) {
				t.Errorf("%s/%s: %.2f round trips, %.2f commands per op; want 3 and 12",
					r.Scenario, r.Impl, r.RoundTripsPerAcq, r.CommandsPerAcq)
			}
			if strings.HasPrefix(r.Scenario, "scale") && r.CPUUsPerAcq <= 0 {
				t.Errorf("%s/%s: server CPU per op %.2fµs", r.Scenario, r.Impl, r.CPUUsPerAcq)
			}
		}
	}
}

// TestSuiteMiniredis proves the fallback: the run works and says loudly
// that its figures are not comparable.
// Impls on servers of their own (etcd, postgres) are left out: TestSuite
// runs them.
func TestSuiteMiniredis(t *testing.T) {
	var onRedis []string
	for _, im := range impls {
		if im.onRedis() {
			onRedis = append(onRedis, im.Name)
		}
	}
	// 200ms, as TestSuite: at 100ms (50ms a round) RedLock over five
	// in-process servers made no acquisition once, under CI's load.
	cfg := Config{Duration: 200 * time.Millisecond, Mini: true, Impls: strings.Join(onRedis, ",")}
	rep, stdout := runSuite(t, cfg)
	if rep.Mode != "miniredis" || !strings.Contains(stdout, "NOT comparable") {
		t.Errorf("mode %q; stdout does not warn about miniredis", rep.Mode)
	}
}

func TestTimeline(t *testing.T) {
	ms := time.Millisecond
	// Three holds: a waited for nothing, b waited from 0.5ms and got the
	// lock 0.2ms after a's release; c arrived after b's release (no handoff).
	// Each Unlock is called 0.1ms before it returns.
	us := time.Microsecond
	all := []acq{
		{start: 0, got: 0, unl: 900 * us, rel: 1 * ms},
		{start: ms / 2, got: 1200 * us, unl: 1900 * us, rel: 2 * ms},
		{start: 3 * ms, got: 3 * ms, unl: 3900 * us, rel: 4 * ms},
	}
	run := &Run{Wall: 5 * ms}
	Load{Capacity: 1}.timeline(run, all)
	if run.Held != 2800*us || run.UserHeld != 2500*us {
		t.Errorf("held %v, user-side %v, want 2.8ms, 2.5ms", run.Held, run.UserHeld)
	}
	// The handoff runs from the Unlock call: 0.9ms to 1.2ms.
	if len(run.Handoffs) != 1 || run.Handoffs[0] != 300*us {
		t.Errorf("handoffs %v, want [300µs]", run.Handoffs)
	}
	if len(run.Waits) != 3 || run.Waits[1] != 700*time.Microsecond {
		t.Errorf("waits %v", run.Waits)
	}
}

func TestMixedFinish(t *testing.T) {
	// 6 Go workers made 600 acquisitions, 2 Java ones 100, in 2s: 50 per
	// Java worker against 100 per Go worker.
	r := &Result{WallSeconds: 2, Series: map[string]Dist{"Go wait": {N: 600}, "Java wait": {N: 100}}}
	mixedFinish(r)
	if r.Extra["Go acq/s"] != 300 || r.Extra["Java acq/s"] != 50 || r.Extra["Java share"] != 0.5 {
		t.Errorf("figures %v, want Go 300/s, Java 50/s, share 0.5", r.Extra)
	}
	g := goal{scenario: "hotlock-mixed", impl: targetImpl, metric: mJavaShare, within: true, bound: 2}
	r.Scenario, r.Impl, r.Acquisitions = "hotlock-mixed", targetImpl, 700
	for share, want := range map[float64]string{0.5: "PASS", 2: "PASS", 0.49: "MISS", 2.1: "MISS", 1: "PASS"} {
		r.Extra["Java share"] = share
		if got := g.eval([]*Result{r}).Status; got != want {
			t.Errorf("Java share %v: %s, want %s", share, got, want)
		}
	}
}

func TestRedissonPrefix(t *testing.T) {
	if got := redissonPrefix("redisson_lock__channel", "orders"); got != "redisson_lock__channel:{orders}" {
		t.Error(got)
	}
	if got := redissonPrefix("redisson_lock__channel", "bench:{x}"); got != "redisson_lock__channel:bench:{x}" {
		t.Error(got)
	}
}

func TestGauge(t *testing.T) {
	var g gauge
	if g.enter(false, 1) {
		t.Error("first exclusive holder reported as a violation")
	}
	if !g.enter(false, 1) {
		t.Error("second exclusive holder not reported")
	}
	g.leave(false)
	if !g.enter(true, 1) {
		t.Error("shared holder beside an exclusive one not reported")
	}
	g.leave(true)
	g.leave(false)
	if first, second := g.enter(true, 1), g.enter(true, 1); first || second {
		t.Error("two shared holders reported")
	}
	if !g.enter(false, 8) {
		t.Error("exclusive holder beside shared ones not reported")
	}
}

func TestDist(t *testing.T) {
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	d := distOf(xs)
	if d.P50 != 50 || d.P99 != 99 || d.Max != 100 || d.N != 100 {
		t.Errorf("dist %+v", d)
	}
	h := histogram([]time.Duration{time.Microsecond, time.Millisecond, time.Hour})
	if h[0] != 1 || h[2*histPerDecade] != 1 || h[histBuckets-1] != 1 {
		t.Errorf("histogram %v", h)
	}
}
