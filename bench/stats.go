package main

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// setupCommands are sent once per connection or by the suite itself; they
// are left out of the per-acquisition command counts.
var setupCommands = map[string]bool{"info": true, "hello": true, "client|setinfo": true, "client": true}

// outsideScripts are commands a Lua script cannot run: whatever commandstats
// counts of them was sent by a client, on a pub/sub connection if hooks did
// not see it.
var outsideScripts = []string{"subscribe", "unsubscribe", "ssubscribe", "sunsubscribe", "psubscribe", "punsubscribe"}

// A meter measures the commands a run costs: all of them from INFO
// commandstats (which also counts the commands Lua scripts run), and the
// round trips the clients paid (hooked commands, plus pub/sub commands that
// bypass hooks, taken from commandstats). PINGs the suite sends as a
// yardstick are declared with probe and left out.
type meter struct {
	env       *Env
	cs        *Clients
	before    map[string]cmdStat
	cpuBefore time.Duration // -1 when the server cannot tell
	cliBefore time.Duration // the bench process's; -1 when unknown
	probes    atomic.Int64
}

type cmdStat struct{ calls, usec int64 }

// usage is what a run cost the server, and the client. Commands and
// RoundTrips are -1 when the server cannot tell (miniredis has no
// commandstats), CPU when it cannot tell its CPU time, ClientCPU when the
// platform cannot.
type usage struct {
	Commands   int64
	RoundTrips int64
	Usec       int64            // server time spent in commands
	CPU        time.Duration    // the server's CPU time, user and system
	ClientCPU  time.Duration    // the bench process's CPU time, user and system
	Mix        map[string]int64 // calls per command
	Records    *RecordStats     // alive at the end; nil off Redis or when unknown
}

func startMeter(ctx context.Context, env *Env, cs *Clients) *meter {
	m := &meter{env: env, cs: cs}
	m.before, _ = commandStats(ctx, env)
	m.cpuBefore = serverCPU(ctx, env, cs.im)
	m.cliBefore = clientCPU()
	cs.sent.Store(0)
	cs.ping.Store(0)
	return m
}

// serverCPU returns the CPU time used so far by the servers im runs on:
// for Redis, used_cpu_user plus used_cpu_sys of INFO cpu summed over every
// server of env; for a peer, its process's and children's, from /proc. It
// returns -1 when it cannot tell.
func serverCPU(ctx context.Context, env *Env, im *Impl) time.Duration {
	if im != nil && im.Peer != nil {
		pp := env.Peers[im.Peer]
		if pp == nil {
			return -1
		}
		d, err := pp.proc.cpu()
		if err != nil {
			return -1
		}
		return d
	}
	var total float64
	for _, c := range env.Controls {
		s, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return -1
		}
		user, ok1 := infoFloat(s, "used_cpu_user")
		sys, ok2 := infoFloat(s, "used_cpu_sys")
		if !ok1 || !ok2 {
			return -1
		}
		total += user + sys
	}
	return time.Duration(total * float64(time.Second))
}

// infoFloat returns the value of field in an INFO reply.
func infoFloat(info, field string) (float64, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// probe declares n yardstick PINGs.
func (m *meter) probe(n int64) { m.probes.Add(n) }

// clientCPU returns the bench process's CPU time so far, -1 when unknown.
func clientCPU() time.Duration {
	d, err := selfCPU()
	if err != nil {
		return -1
	}
	return d
}

// stop reads what the run cost: the server's and the client's CPU and
// the commands, then, its figures read, counts the records alive.
func (m *meter) stop(ctx context.Context) usage {
	cpu, cli := time.Duration(-1), time.Duration(-1)
	if m.cpuBefore >= 0 {
		if after := serverCPU(ctx, m.env, m.cs.im); after >= 0 {
			cpu = after - m.cpuBefore
		}
	}
	if after := clientCPU(); m.cliBefore >= 0 && after >= 0 {
		cli = after - m.cliBefore
	}
	u := m.commands(ctx)
	u.CPU, u.ClientCPU = cpu, cli
	if m.cs.im == nil || m.cs.im.onRedis() {
		u.Records, _ = countRecords(ctx, m.env, m.cs.seq0)
	}
	return u
}

// commands returns the commands and round trips of the run.
func (m *meter) commands(ctx context.Context) usage {
	after, err := commandStats(ctx, m.env)
	if err != nil || m.before == nil {
		rt := int64(-1)
		if m.cs.im != nil && !m.cs.im.onRedis() {
			rt = m.cs.sent.Load() // a peer's requests need no commandstats
		}
		return usage{Commands: -1, RoundTrips: rt}
	}
	u := usage{Mix: map[string]int64{}}
	for name, a := range after {
		b := m.before[name]
		if setupCommands[name] || a.calls == b.calls {
			continue
		}
		u.Mix[name] = a.calls - b.calls
		u.Commands += a.calls - b.calls
		u.Usec += a.usec - b.usec
	}
	probes := m.probes.Load()
	u.RoundTrips = m.cs.sent.Load()
	for _, name := range outsideScripts {
		u.RoundTrips += u.Mix[name]
	}
	// PINGs that hooks did not see come from pub/sub health checks or are
	// probes; hooked probes are in sent. Either way each probe counts once.
	u.RoundTrips += max(0, u.Mix["ping"]-m.cs.ping.Load()) - probes
	u.Commands -= probes
	if u.Mix["ping"] -= probes; u.Mix["ping"] <= 0 {
		delete(u.Mix, "ping")
	}
	return u
}

// commandStats returns calls and time per command from INFO commandstats,
// summed over every server of env.
func commandStats(ctx context.Context, env *Env) (map[string]cmdStat, error) {
	out := map[string]cmdStat{}
	for _, c := range env.Controls {
		s, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			return nil, err
		}
		parseCommandStats(s, out)
	}
	return out, nil
}

func parseCommandStats(s string, out map[string]cmdStat) {
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st cmdStat
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.calls = n
			case "usec":
				st.usec = n
			}
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		out[name] = cmdStat{out[name].calls + st.calls, out[name].usec + st.usec}
	}
}

// A Dist summarizes durations, in milliseconds.
type Dist struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

func distOf(xs []time.Duration) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(0, min(i, len(s)-1))])
	}
	return Dist{N: len(s), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: ms(s[len(s)-1]), Mean: ms(sum) / float64(len(s))}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Histogram buckets are logarithmic, histPerDecade per decade from histMin:
// bucket i holds [histMin*10^(i/k), histMin*10^((i+1)/k)); the last one also
// holds everything above.
const (
	histMin       = 10 * time.Microsecond
	histPerDecade = 5
	histBuckets   = 6 * histPerDecade // 10µs .. 10s
)

func histogram(xs []time.Duration) []int {
	h := make([]int, histBuckets)
	for _, x := range xs {
		i := 0
		if x > histMin {
			i = int(math.Log10(float64(x)/float64(histMin)) * histPerDecade)
		}
		h[min(i, histBuckets-1)]++
	}
	return h
}
