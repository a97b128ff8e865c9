package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is what the command line asks for.
type Config struct {
	Redis     string        // existing server; "" starts one
	Nodes     []string      // existing independent masters for redlock; none starts them
	Mini      bool          // force miniredis
	Duration  time.Duration // per scenario per impl, split over the rounds
	Rounds    int
	Scenarios string
	Impls     string
	JSON      string // "" means Out/results.json
	Out       string // "" writes no report
	Progress  bool
	Command   string // the command line, for the report
	// InstrOps is how many operations the instructions scenario measures
	// per window; 0 means instrOps. InstrDumps, if set, is a directory
	// where it keeps each window's callgrind profile.
	InstrOps   int
	InstrDumps string
}

// A Report is everything one invocation measured; it is the JSON file.
type Report struct {
	When       time.Time  `json:"when"`
	Command    string     `json:"command"`
	Machine    string     `json:"machine"`
	GoVersion  string     `json:"go_version"`
	Server     string     `json:"server"`
	Mode       string     `json:"mode"` // external, embedded or miniredis
	Mini       bool       `json:"miniredis"`
	Note       string     `json:"note,omitempty"`
	Peers      []string   `json:"peers,omitempty"` // the peer servers and their versions
	Notes      []string   `json:"notes,omitempty"` // what was skipped, and why
	Duration   string     `json:"duration_per_scenario_per_impl"`
	Rounds     int        `json:"rounds"`
	Impls      []implInfo `json:"impls"`
	Scenarios  []scenInfo `json:"scenarios"`
	Results    []*Result  `json:"results"`
	Targets    []Target   `json:"targets"`
	Violations int        `json:"violations"`
}

type implInfo struct {
	Name  string `json:"name"`
	Kind  Kind   `json:"kind"`
	Color string `json:"color"`
	About string `json:"about"`
}

type scenInfo struct {
	Name    string   `json:"name"`
	Workers int      `json:"workers"`
	About   string   `json:"about"`
	Impls   []string `json:"impls"`
	scen    *Scenario
}

// run runs the suite and writes the table to stdout, progress to stderr and
// the JSON and Markdown report under cfg.Out.
func run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (*Report, error) {
	scs, err := selectScenarios(cfg.Scenarios)
	if err != nil {
		return nil, err
	}
	ims, err := selectImpls(cfg.Impls)
	if err != nil {
		return nil, err
	}
	cfg.Rounds = max(cfg.Rounds, 1)
	b, err := setup(ctx, cfg, scs, ims, stderr)
	if err != nil {
		return nil, err
	}
	defer b.stop()
	env := b.env
	env.Rounds = cfg.Rounds
	env.InstrOps, env.InstrDumps = cmp.Or(cfg.InstrOps, instrOps), cfg.InstrDumps

	rep := &Report{
		When: time.Now(), Command: cfg.Command, Machine: machine(), GoVersion: runtime.Version(),
		Server: serverVersion(ctx, env.Control, b.srv), Mode: b.srv.Mode, Mini: env.Mini,
		Peers: peerVersions(env), Duration: cfg.Duration.String(), Rounds: cfg.Rounds, Notes: b.notes,
	}
	if env.Mini {
		rep.Note = miniNote
		fmt.Fprintln(stderr, "bench: "+miniNote)
	}
	for _, im := range b.ims {
		rep.Impls = append(rep.Impls, implInfo{im.Name, im.Kind, im.Color, im.About})
	}
	total := 0
	for _, sc := range scs {
		if why := b.skipReason(sc); why != "" {
			note := fmt.Sprintf("skipped scenario %s: %s", sc.Name, why)
			rep.Notes = append(rep.Notes, note)
			fmt.Fprintln(stderr, "bench: "+note)
			continue
		}
		si := scenInfo{Name: sc.Name, Workers: sc.Workers, About: sc.About, scen: sc}
		for _, im := range b.implsOf(sc) {
			si.Impls = append(si.Impls, im.Name)
		}
		total += len(si.Impls) * cfg.Rounds
		rep.Scenarios = append(rep.Scenarios, si)
	}
	fmt.Fprintf(stderr, "bench: %s Redis %s at %s; %d runs of %v (%v per scenario per impl, %d rounds)\n",
		b.srv.Mode, rep.Server, b.srv.Addr, total, cfg.Duration/time.Duration(cfg.Rounds), cfg.Duration, cfg.Rounds)

	prog := newProgress(stderr, cfg.Progress, total, env.Ops)
	per := cfg.Duration / time.Duration(cfg.Rounds)
	for _, si := range rep.Scenarios {
		runs := map[string][]*Run{}
		failed := map[string]string{}
		ims := b.implsOf(si.scen)
		// Interleaved: every impl runs once per round, in turn.
		for round := 1; round <= cfg.Rounds; round++ {
			for _, im := range ims {
				if failed[im.Name] != "" {
					continue
				}
				prog.start(si.Name, im.Name, round, cfg.Rounds, per)
				env.Round = round
				r, err := si.scen.Run(ctx, env, im, per)
				prog.done(r)
				if ctx.Err() != nil {
					prog.stop()
					return nil, ctx.Err()
				}
				if err != nil {
					failed[im.Name] = err.Error()
					continue
				}
				runs[im.Name] = append(runs[im.Name], r)
			}
		}
		for _, im := range ims {
			res := summarize(si.scen, im, runs[im.Name], failed[im.Name])
			rep.Results = append(rep.Results, res)
			rep.Violations += res.Violations
		}
	}
	prog.stop()
	relate(rep.Results)
	rep.Targets = evalTargets(rep.Results)

	writeTable(stdout, rep)
	return rep, writeFiles(cfg, rep, stdout)
}

func serverVersion(ctx context.Context, c *redis.Client, srv *server) string {
	if srv.mini != nil {
		return "miniredis"
	}
	s, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return "unknown"
}

// machine describes the host: OS, architecture, CPU model and count.
func machine() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v) + ", "
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %s%d CPUs (GOMAXPROCS %d)", runtime.GOOS, runtime.GOARCH, model,
		runtime.NumCPU(), runtime.GOMAXPROCS(0))
}
