package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
}

// A Report is everything one invocation measured; it is the JSON file.
type Report struct {
	When       time.Time  `json:"when"`
	Command    string     `json:"command"`
	Machine    string     `json:"machine"`
	GoVersion  string     `json:"go_version"`
	Server     string     `json:"server"`
	Mode       string     `json:"mode"` // external, embedded or miniredis
	Note       string     `json:"note,omitempty"`
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
	srv, err := startServer(ctx, cfg.Redis, cfg.Mini, stderr)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	control := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer control.Close()
	env := &Env{Addr: srv.Addr, Mini: srv.mini != nil, Control: control, Controls: []*redis.Client{control}}
	if n := nodesNeeded(scs, ims); n > 0 {
		nodes, err := startNodes(ctx, cfg.Nodes, n, env.Mini, stderr)
		if err != nil {
			return nil, fmt.Errorf("independent masters: %w", err)
		}
		defer stopAll(nodes)
		for _, nd := range nodes {
			env.Nodes = append(env.Nodes, nd.Addr)
			c := redis.NewClient(&redis.Options{Addr: nd.Addr})
			defer c.Close()
			env.Controls = append(env.Controls, c)
			env.Mini = env.Mini || nd.mini != nil
		}
	}

	rep := &Report{
		When: time.Now(), Command: cfg.Command, Machine: machine(), GoVersion: runtime.Version(),
		Server: serverVersion(ctx, control, srv), Mode: srv.Mode,
		Duration: cfg.Duration.String(), Rounds: cfg.Rounds,
	}
	if env.Mini {
		rep.Note = miniNote
		fmt.Fprintln(stderr, "bench: "+miniNote)
	}
	for _, im := range ims {
		rep.Impls = append(rep.Impls, implInfo{im.Name, im.Kind, im.About})
	}
	total := 0
	for _, sc := range scs {
		if sc.Replication && env.Mini {
			fmt.Fprintf(stderr, "bench: skipping %s: miniredis has no replication\n", sc.Name)
			continue
		}
		si := scenInfo{Name: sc.Name, Workers: sc.Workers, About: sc.About, scen: sc}
		for _, im := range ims {
			if sc.runs(im) {
				si.Impls = append(si.Impls, im.Name)
			}
		}
		total += len(si.Impls) * cfg.Rounds
		rep.Scenarios = append(rep.Scenarios, si)
	}
	fmt.Fprintf(stderr, "bench: %s Redis %s at %s; %d runs of %v (%v per scenario per impl, %d rounds)\n",
		srv.Mode, rep.Server, srv.Addr, total, cfg.Duration/time.Duration(cfg.Rounds), cfg.Duration, cfg.Rounds)

	prog := newProgress(stderr, cfg.Progress, total, &env.Ops)
	per := cfg.Duration / time.Duration(cfg.Rounds)
	for _, si := range rep.Scenarios {
		runs := map[string][]*Run{}
		failed := map[string]string{}
		// Interleaved: every impl runs once per round, in turn.
		for round := 1; round <= cfg.Rounds; round++ {
			for _, im := range ims {
				if !si.scen.runs(im) || failed[im.Name] != "" {
					continue
				}
				prog.start(si.Name, im.Name, round, cfg.Rounds, per)
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
			if si.scen.runs(im) {
				res := summarize(si.scen, im, runs[im.Name], failed[im.Name])
				rep.Results = append(rep.Results, res)
				rep.Violations += res.Violations
			}
		}
	}
	prog.stop()
	rep.Targets = evalTargets(rep.Results)

	writeTable(stdout, rep)
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return rep, err
		}
		if err := writeReport(cfg.Out, rep); err != nil {
			return rep, err
		}
	}
	jsonPath := cfg.JSON
	if jsonPath == "" && cfg.Out != "" {
		jsonPath = filepath.Join(cfg.Out, "results.json")
	}
	if jsonPath != "" {
		if err := writeJSON(jsonPath, rep); err != nil {
			return rep, err
		}
	}
	if cfg.Out != "" || jsonPath != "" {
		fmt.Fprintf(stdout, "\nWrote %s\n", strings.Join(written(cfg.Out, jsonPath), ", "))
	}
	return rep, nil
}

// nodesNeeded returns how many independent masters the selected scenarios
// need for the selected impls.
func nodesNeeded(scs []*Scenario, ims []*Impl) int {
	n := 0
	for _, sc := range scs {
		for _, im := range ims {
			if sc.runs(im) {
				n = max(n, sc.Nodes)
			}
		}
	}
	return n
}

func written(out, json string) []string {
	var w []string
	if out != "" {
		w = append(w, filepath.Join(out, "report.md")+" (+ SVG charts)")
	}
	if json != "" {
		w = append(w, json)
	}
	return w
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
