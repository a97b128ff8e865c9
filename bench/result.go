package main

import (
	"math"
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
	// Utilization is the fraction of wall time the lock was held as the
	// server saw it, from Lock's return to Unlock's; UserUtilization the
	// fraction some worker spent inside the critical section, from Lock's
	// return to the Unlock call (contended scenarios only).
	Utilization     float64 `json:"utilization"`
	UserUtilization float64 `json:"user_utilization"`
	Wait            Dist    `json:"wait"`      // Lock call to Lock return
	Handoff         Dist    `json:"handoff"`   // Unlock call to the next waiting acquirer's Lock return
	Latency         Dist    `json:"latency"`   // uncontended: Lock+Unlock
	Ping            Dist    `json:"ping"`      // PING round trip measured in the same runs
	IdlePing        Dist    `json:"idle_ping"` // PING round trip just before each run
	// LatencyRTT and HandoffRTT are the p50s divided by the PING p50.
	LatencyRTT float64 `json:"latency_p50_in_rtt,omitempty"`
	HandoffRTT float64 `json:"handoff_p50_in_rtt,omitempty"`
	// HandoffVsFloor is the handoff p50 over the wakeretry yardstick's in
	// the same scenario and run (0 when it did not run).
	HandoffVsFloor float64 `json:"handoff_p50_vs_wakeretry,omitempty"`
	FairMin        int     `json:"worker_min_acquisitions"`
	FairMax        int     `json:"worker_max_acquisitions"`
	// CommandsPerAcq counts every command INFO commandstats saw, including
	// those run inside Lua scripts; RoundTripsPerAcq counts the commands the
	// clients sent (an EVALSHA is one). Both are -1 when the server cannot
	// tell (miniredis).
	CommandsPerAcq   float64            `json:"commands_per_acquisition"`
	RoundTripsPerAcq float64            `json:"round_trips_per_acquisition"`
	CommandMix       map[string]float64 `json:"command_mix_per_acquisition,omitempty"`
	ServerUsPerAcq   float64            `json:"server_us_per_acquisition"` // commandstats usec
	// CPUUsPerAcq is the server's CPU time per acquisition: INFO cpu for
	// Redis, /proc for a peer; -1 when unknown.
	CPUUsPerAcq float64 `json:"server_cpu_us_per_acquisition"`
	// ClientCPUUsPerAcq is the bench process's CPU time per acquisition
	// (getrusage RUSAGE_SELF, user+system: the workers' clients and the
	// bench's own bookkeeping); -1 when unknown.
	ClientCPUUsPerAcq float64 `json:"client_cpu_us_per_acquisition"`
	// Records are the request records and unlock latches of the run's
	// names alive at the end of a run, and their memory: the mean over the
	// rounds. Nil for an impl off Redis (records.go).
	Records *RecordStats `json:"records_at_end,omitempty"`
	// Peer names the server of an impl that does not run on Redis.
	Peer       string             `json:"peer,omitempty"`
	Errors     int                `json:"errors"`
	GiveUps    int                `json:"give_ups"`
	Violations int                `json:"violations"`
	FirstError string             `json:"first_error,omitempty"`
	WaitHist   []int              `json:"wait_histogram"` // counts per bucket: bucket i starts at histMin·10^(i/histPerDecade)
	Series     map[string]Dist    `json:"series,omitempty"`
	Extra      map[string]float64 `json:"extra,omitempty"`
	Failed     string             `json:"failed,omitempty"` // a run could not be set up
	// Windows are the instructions scenario's measured windows, every
	// round's.
	Windows []Window `json:"instruction_windows,omitempty"`

	samples []time.Duration // sorted waits (latencies when uncontended), for the charts
}

// summarize merges the rounds of one impl in one scenario.
func summarize(sc *Scenario, im *Impl, runs []*Run, failed string) *Result {
	r := &Result{Scenario: sc.Name, Impl: im.Name, Workers: sc.Workers, Rounds: len(runs), Failed: failed}
	if im.Peer != nil {
		r.Peer = im.Peer.Name
	}
	var (
		waits, handoffs, lat, pingv []time.Duration
		idle                        []time.Duration
		wall, held, userHeld, cpu   time.Duration
		cli                         time.Duration
		records                     []*RecordStats
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
		userHeld += run.UserHeld
		if cpu >= 0 && run.Use.CPU >= 0 {
			cpu += run.Use.CPU
		} else {
			cpu = -1
		}
		if cli >= 0 && run.Use.ClientCPU >= 0 {
			cli += run.Use.ClientCPU
		} else {
			cli = -1
		}
		records = append(records, run.Use.Records)
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
		if rts >= 0 && run.Use.RoundTrips >= 0 {
			rts += run.Use.RoundTrips
		} else {
			rts = -1
		}
		if cmds >= 0 && run.Use.Commands >= 0 {
			cmds += run.Use.Commands
			usec += run.Use.Usec
			for k, v := range run.Use.Mix {
				mix[k] += v
			}
		} else {
			cmds = -1
		}
		for k, v := range run.Extra {
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			r.Extra[k] += v
		}
		r.Windows = append(r.Windows, run.Windows...)
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
			r.UserUtilization = float64(userHeld) / float64(wall)
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
	r.CommandsPerAcq, r.RoundTripsPerAcq, r.CPUUsPerAcq, r.ClientCPUUsPerAcq = -1, -1, -1, -1
	if rts >= 0 && r.Acquisitions > 0 {
		r.RoundTripsPerAcq = float64(rts) / float64(r.Acquisitions)
	}
	if cpu >= 0 && r.Acquisitions > 0 && len(runs) > 0 {
		r.CPUUsPerAcq = float64(cpu.Microseconds()) / float64(r.Acquisitions)
	}
	if cli >= 0 && r.Acquisitions > 0 && len(runs) > 0 {
		r.ClientCPUUsPerAcq = float64(cli.Microseconds()) / float64(r.Acquisitions)
	}
	r.Records = meanRecords(records)
	// A peer's commands are not Redis commands: only its requests count.
	if cmds >= 0 && r.Acquisitions > 0 && im.Peer == nil {
		r.CommandsPerAcq = float64(cmds) / float64(r.Acquisitions)
		r.ServerUsPerAcq = float64(usec) / float64(r.Acquisitions)
		r.CommandMix = map[string]float64{}
		for k, v := range mix {
			r.CommandMix[k] = float64(v) / float64(r.Acquisitions)
		}
	}
	r.samples = waits
	if !sc.Contended {
		r.samples = lat
	}
	slices.Sort(r.samples)
	r.WaitHist = histogram(r.samples)
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

// relate sets the figures that compare results of one run: each contended
// result's handoff p50 over the wakeretry yardstick's in its scenario, and
// each cluster result's throughput over the same impl's on one server.
func relate(results []*Result) {
	for _, r := range results {
		if floor := find(results, r.Scenario, "wakeretry"); floor != nil && floor.Handoff.P50 > 0 && r.Handoff.N > 0 {
			r.HandoffVsFloor = r.Handoff.P50 / floor.Handoff.P50
		}
		if one := find(results, "scale", r.Impl); r.Scenario == "scale-cluster" && one != nil && one.PerSecond > 0 {
			if r.Extra == nil {
				r.Extra = map[string]float64{}
			}
			r.Extra["× 1 server"] = math.Round(r.PerSecond/one.PerSecond*100) / 100
		}
	}
}
