// Command bench runs latchkey's synchronizers side by side with redsync and
// bsm/redislock on one Redis server, with etcd's concurrency.Mutex and
// PostgreSQL advisory locks on servers of their own, and with two
// yardsticks written here: wakeretry, a minimal wake-and-retry pub/sub
// lock, and redisson, Redisson's RLock protocol as its Java client sends
// it. It reports throughput, lock utilization (as the server saw it and
// inside the critical section), handoff gaps, waits, fairness, round trips
// and commands per acquisition, server and client CPU per operation, the
// request records alive at the end of a run, and mutual-exclusion
// violations, and checks latchkey's figures against the issues' targets.
//
// From the repository root:
//
//	go -C bench run .                        # every default scenario, ~4 minutes
//	go -C bench run . -duration 200ms        # a quick smoke run
//	go -C bench run . -redis 127.0.0.1:6379 -scenarios hotlock -impls latchkey,redsync
//
// Without -redis it starts a throwaway redis-server from PATH on a free
// loopback port (through internal/redistest), or, when there is none, an
// in-process miniredis whose figures are not comparable to a real server.
// etcd and PostgreSQL are started the same way when installed, and their
// impls skipped with a note when not. It prints a table on stdout and
// writes report.md, SVG charts and results.json into -out, and says where,
// as paths from the repository root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

func main() {
	candidateMain() // a child of the election scenario runs only that
	var cfg Config
	flag.StringVar(&cfg.Redis, "redis", "", "address of an existing Redis `ADDR` (default: start a throwaway redis-server)")
	flag.BoolVar(&cfg.Mini, "miniredis", false, "use an in-process miniredis even if redis-server is installed")
	flag.DurationVar(&cfg.Duration, "duration", 3*time.Second, "time per scenario per impl, split over the rounds")
	flag.IntVar(&cfg.Rounds, "rounds", 2, "interleaved rounds: every impl runs once per round, in turn")
	flag.StringVar(&cfg.Scenarios, "scenarios", "default", "comma-separated scenarios to run; \"default\" leaves out the optional ones, \"all\" runs every one")
	flag.StringVar(&cfg.Impls, "impls", "all", "comma-separated implementations to run")
	flag.StringVar(&cfg.JSON, "json", "", "write the results as JSON to `FILE` (default: DIR/results.json)")
	flag.StringVar(&cfg.Out, "out", "out", "write report.md and SVG charts into `DIR` (\"\" for none)")
	flag.BoolVar(&cfg.Progress, "progress", true, "show a progress line on stderr")
	flag.IntVar(&cfg.InstrOps, "instr-ops", instrOps, "operations per measured window of the instructions scenario")
	flag.StringVar(&cfg.InstrDumps, "instr-dumps", "", "keep each window's callgrind profile of the instructions scenario in `DIR`, for callgrind_annotate")
	nodes := flag.String("nodes", "", "comma-separated `ADDRS` of independent masters for redlock (default: start throwaway ones)")
	list := flag.Bool("list", false, "list scenarios and implementations, then exit")
	cpuProfile := flag.String("cpuprofile", "", "write the bench process's CPU profile (its clients') to `FILE`, for go tool pprof")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *list {
		for _, s := range scenarios {
			opt := ""
			if s.Optional {
				opt = " (optional)"
			}
			fmt.Printf("scenario %-16s kinds %v%s: %s\n", s.Name, s.Kinds, opt, s.About)
		}
		for _, im := range impls {
			fmt.Printf("impl     %-18s %-9s %s\n", im.Name, im.Kind, im.About)
		}
		return
	}
	if cfg.Duration <= 0 || cfg.InstrOps <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -duration and -instr-ops must be positive")
		os.Exit(2)
	}
	if *nodes != "" {
		cfg.Nodes = strings.Split(*nodes, ",")
	}
	cfg.Command = commandLine()
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer stopProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		defer os.Exit(1) // after the deferred profile is written
		return
	}
	if rep.Violations > 0 {
		defer os.Exit(3)
	}
}

// startCPUProfile profiles the bench process into path until the returned
// func is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: cpu profile:", err)
		}
	}, nil
}

// commandLine reconstructs how the suite was started, for the report.
func commandLine() string {
	args := strings.Join(os.Args[1:], " ")
	if strings.Contains(os.Args[0], "go-build") {
		return strings.TrimSpace("go -C bench run . " + args)
	}
	return strings.TrimSpace(os.Args[0] + " " + args)
}
