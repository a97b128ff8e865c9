package main

import (
	"slices"
	"time"
)

// A Result is one impl's figures in one scenario, over all its rounds.
type Result struct {
	Scenario     string  `json:"scenario"`
	Impl         string  `json:"impl"`
	Workers      int     `json:"workers"`
	Rounds       int     `json:"rounds"`
	WallSeconds  float64 `json:"wall_s"`
	Acquisitions int     `json:"acquisitions"`
	PerSecond    float64 `json:"acquisitions_per_s"`
	// Utilization is the fraction of wall time the lock was held (contended
	// scenarios only).
	Utilization float64 `json:"utilization"`
	Wait        Dist    `json:"wait"`      // Lock call to Lock return
	Handoff     Dist    `json:"handoff"`   // release to the next waiting acquirer's Lock return
	Latency     Dist    `json:"latency"`   // uncontended: Lock+Unlock
	Ping        Dist    `json:"ping"`      // PING round trip measured in the same runs
	IdlePing    Dist    `json:"idle_ping"` // PING round trip just before each run
	// LatencyRTT and HandoffRTT are the p50s divided by the PING p50.
	LatencyRTT float64 `json:"latency_p50_in_rtt,omitempty"`
	HandoffRTT float64 `json:"handoff_p50_in_rtt,omitempty"`
	FairMin    int     `json:"worker_min_acquisitions"`
	FairMax    int     `json:"worker_max_acquisitions"`
	// CommandsPerAcq counts every command INFO commandstats saw, including
	// those run inside Lua scripts; RoundTripsPerAcq counts the commands the
	// clients sent (an EVALSHA is one). Both are -1 when the server cannot
	// tell (miniredis).
	CommandsPerAcq   float64            `json:"commands_per_acquisition"`
	RoundTripsPerAcq float64            `json:"round_trips_per_acquisition"`
	CommandMix       map[string]float64 `json:"command_mix_per_acquisition,omitempty"`
	ServerUsPerAcq   float64            `json:"server_us_per_acquisition"` // commandstats usec
	Errors           int                `json:"errors"`
	GiveUps          int                `json:"give_ups"`
	Violations       int                `json:"violations"`
	FirstError       string             `json:"first_error,omitempty"`
	WaitHist         []int              `json:"wait_histogram"` // see histEdge
	Series           map[string]Dist    `json:"series,omitempty"`
	Extra            map[string]float64 `json:"extra,omitempty"`
	Failed           string             `json:"failed,omitempty"` // a run could not be set up
}

// summarize merges the rounds of one impl in one scenario.
func summarize(sc *Scenario, im *Impl, runs []*Run, failed string) *Result {
	r := &Result{Scenario: sc.Name, Impl: im.Name, Workers: sc.Workers, Rounds: len(runs), Failed: failed}
	var (
		waits, handoffs, lat, pingv []time.Duration
		idle                        []time.Duration
		wall, held                  time.Duration
		perWorker                   []int
		cmds, rts, usec             int64
		mix                         = map[string]int64{}
		series                      map[string][]time.Duration
	)
	for _, run := range runs {
		waits = append(waits, run.Waits...)
		handoffs = append(handoffs, run.Handoffs...)
		lat = append(lat, run.Lat...)
		pingv = append(pingv, run.Pings...)
		idle = append(idle, run.IdlePings...)
		wall += run.Wall
		held += run.Held
		r.Acquisitions += run.Ops
		r.Errors += run.Errors
		r.GiveUps += run.GiveUps
		r.Violations += run.Violations
		if r.FirstError == "" {
			r.FirstError = run.FirstErr
		}
		if len(perWorker) < len(run.PerWorker) {
			perWorker = append(perWorker, make([]int, len(run.PerWorker)-len(perWorker))...)
		}
		for i, n := range run.PerWorker {
			perWorker[i] += n
		}
		if cmds >= 0 && run.Use.Commands >= 0 {
			cmds += run.Use.Commands
			rts += run.Use.RoundTrips
			usec += run.Use.Usec
			for k, v := range run.Use.Mix {
				mix[k] += v
			}
		} else {
			cmds, rts = -1, -1
		}
		for k, v := range run.Extra {
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			r.Extra[k] += v
		}
		for k, v := range run.Series {
			if series == nil {
				series = map[string][]time.Duration{}
			}
			series[k] = append(series[k], v...)
		}
	}
	r.WallSeconds = wall.Seconds()
	if wall > 0 {
		r.PerSecond = float64(r.Acquisitions) / wall.Seconds()
		if sc.Contended {
			r.Utilization = float64(held) / float64(wall)
		}
	}
	r.Wait, r.Handoff, r.Latency, r.Ping = distOf(waits), distOf(handoffs), distOf(lat), distOf(pingv)
	r.IdlePing = distOf(idle)
	if r.Ping.P50 > 0 {
		r.LatencyRTT = r.Latency.P50 / r.Ping.P50
		r.HandoffRTT = r.Handoff.P50 / r.Ping.P50
	}
	if len(perWorker) > 0 {
		r.FairMin, r.FairMax = slices.Min(perWorker), slices.Max(perWorker)
	}
	r.CommandsPerAcq, r.RoundTripsPerAcq = -1, -1
	if cmds >= 0 && r.Acquisitions > 0 {
		r.CommandsPerAcq = float64(cmds) / float64(r.Acquisitions)
		r.RoundTripsPerAcq = float64(rts) / float64(r.Acquisitions)
		r.ServerUsPerAcq = float64(usec) / float64(r.Acquisitions)
		r.CommandMix = map[string]float64{}
		for k, v := range mix {
			r.CommandMix[k] = float64(v) / float64(r.Acquisitions)
		}
	}
	if sc.Contended {
		r.WaitHist = histogram(waits)
	} else {
		r.WaitHist = histogram(lat)
	}
	for k, v := range series {
		if r.Series == nil {
			r.Series = map[string]Dist{}
		}
		r.Series[k] = distOf(v)
	}
	if sc.Finish != nil {
		sc.Finish(r)
	}
	return r
}
