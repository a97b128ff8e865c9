package main

import "fmt"

// A Target is one of issue 5's goals for latchkey, reported, never asserted.
type Target struct {
	Name   string `json:"name"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	Status string `json:"status"` // PASS, MISS or n/a
	Margin string `json:"margin,omitempty"`
}

// targetImpl is the impl the targets are about.
const targetImpl = "latchkey"

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

// evalTargets checks latchkey's figures against the targets.
func evalTargets(results []*Result) []Target {
	var out []Target
	viol := 0
	for _, r := range results {
		viol += r.Violations
	}
	out = append(out, Target{Name: "mutual exclusion, every scenario and impl", Want: "0 violations",
		Got: fmt.Sprintf("%d violations", viol), Status: status(viol == 0)})

	na := func(name, want string) Target { return Target{Name: name, Want: want, Got: "not run", Status: "n/a"} }
	if r := find(results, "hotlock", targetImpl); r != nil {
		u := r.Utilization * 100
		out = append(out, Target{Name: "hotlock utilization", Want: ">= 90%", Got: fmt.Sprintf("%.1f%%", u),
			Status: status(u >= 90), Margin: fmt.Sprintf("%+.1f points", u-90)})
		out = append(out, Target{Name: "hotlock handoff p50", Want: "<= 3 PING round trips",
			Got: fmt.Sprintf("%.2f round trips (%.3fms; PING p50 %.3fms under the run's load, %.3fms idle)",
				r.HandoffRTT, r.Handoff.P50, r.Ping.P50, r.IdlePing.P50),
			Status: status(r.HandoffRTT <= 3), Margin: fmt.Sprintf("%+.2f round trips", 3-r.HandoffRTT)})
		if r.RoundTripsPerAcq >= 0 {
			out = append(out, Target{Name: "hotlock Redis commands per acquisition", Want: "<= 3 (client round trips)",
				Got: fmt.Sprintf("%.2f round trips; %.1f commands counting those inside scripts",
					r.RoundTripsPerAcq, r.CommandsPerAcq),
				Status: status(r.RoundTripsPerAcq <= 3), Margin: fmt.Sprintf("%+.2f", 3-r.RoundTripsPerAcq)})
		} else {
			out = append(out, Target{Name: "hotlock Redis commands per acquisition", Want: "<= 3 (client round trips)",
				Got: "unknown: the server has no INFO commandstats", Status: "n/a"})
		}
	} else {
		out = append(out, na("hotlock utilization", ">= 90%"), na("hotlock handoff p50", "<= 3 PING round trips"),
			na("hotlock Redis commands per acquisition", "<= 3 (client round trips)"))
	}
	if r := find(results, "uncontended", targetImpl); r != nil {
		out = append(out, Target{Name: "uncontended Lock+Unlock p50", Want: "<= 2.2 PING round trips",
			Got:    fmt.Sprintf("%.2f round trips (%.3fms, PING p50 %.3fms)", r.LatencyRTT, r.Latency.P50, r.Ping.P50),
			Status: status(r.LatencyRTT <= 2.2), Margin: fmt.Sprintf("%+.2f round trips", 2.2-r.LatencyRTT)})
	} else {
		out = append(out, na("uncontended Lock+Unlock p50", "<= 2.2 PING round trips"))
	}
	return out
}
