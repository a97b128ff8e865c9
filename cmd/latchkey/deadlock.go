package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// runDeadlocks finds the processes that wait for each other: the
// wait-for graph across processes, from what ls lists (one SCAN pass),
// printed cycle by cycle with the command that breaks each. It is a
// command of its own rather than a flag of ls: it answers another
// question (which processes, not which synchronizers), prints processes
// rather than rows of keys, exits 8 when it finds one, and looks twice.
func runDeadlocks(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("deadlocks", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per cycle")
	settle := fs.Duration("settle", time.Second, "look again after this long, and keep the cycles whose holds and waits are the same (0: look once)")
	help(fs, "deadlocks [flags] [PATTERN]", deadlocksHelp)
	rest, err := e.parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("want at most one PATTERN, got %d arguments", len(rest))
	}
	if *settle < 0 {
		return usagef("-settle must not be negative")
	}
	pattern := "*"
	if len(rest) == 1 {
		pattern = rest[0]
	}
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.client.Close()
	cycles, g, gaps := findCycles(ctx, e, c, pattern)
	if *settle > 0 && len(cycles) > 0 {
		select {
		case <-time.After(*settle):
		case <-ctx.Done():
			return nil
		}
		before := map[string]bool{}
		for _, cy := range cycles {
			before[signature(cy)] = true
		}
		var more []string
		cycles, g, more = findCycles(ctx, e, c, pattern)
		gaps = append(gaps, more...)
		cycles = slices.DeleteFunc(cycles, func(cy []edge) bool { return !before[signature(cy)] })
	}
	if err := printCycles(e.stdout, *asJSON, cycles, g); err != nil {
		return err
	}
	switch {
	case len(cycles) > 0:
		return &statusError{exitDeadlock, partial(gaps)}
	case len(gaps) > 0:
		return &statusError{exitPartial, partial(gaps)}
	}
	if !*asJSON {
		fmt.Fprintln(e.stdout, "no deadlock: no processes wait for each other")
	}
	return nil
}

// partial says what a listing lacks, "" if nothing.
func partial(gaps []string) string {
	if len(gaps) == 0 {
		return ""
	}
	return "partial listing, cycles through what it lacks unseen: " + strings.Join(gaps, "; ")
}

// findCycles lists the synchronizers matching pattern, as ls does, and
// returns the cycles of their wait-for graph, the graph, and what the
// listing lacks.
func findCycles(ctx context.Context, e *env, c *conn, pattern string) ([][]edge, *graph, []string) {
	var mu sync.Mutex
	var states []*State
	l := &lister{e: e, c: c, pattern: pattern, found: func(sts []*State) error {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range sts {
			if len(st.Queue) > 0 || len(st.Holders) > 0 {
				states = append(states, st)
			}
		}
		return nil
	}}
	gaps := l.run(ctx)
	g := buildGraph(states)
	return g.cycles(), g, gaps
}

// signature names a cycle by its holds and waits, the same only for the
// same calls holding and waiting.
func signature(cycle []edge) string {
	s := make([]string, len(cycle))
	for i, e := range cycle {
		s[i] = e.st.Name + "|" + e.holder.Owner + "|" + e.waiter.Owner
	}
	slices.Sort(s)
	return strings.Join(s, "\n")
}

// A Deadlock is one cycle, as deadlocks -json prints it.
type Deadlock struct {
	// Possible is set for a cycle through a semaphore, whose holders
	// nothing records: it is one if the process after the semaphore holds
	// a permit of it.
	Possible  bool           `json:"possible"`
	Processes []CycleProcess `json:"processes"`
	Break     *Break         `json:"break"` // null if no lock in the cycle can be forced
}

// A CycleProcess is one process of a cycle: what it holds that the one
// before it waits for, and what it waits for.
type CycleProcess struct {
	Process string   `json:"process"` // its UUID, the first half of its owner ids
	Client  string   `json:"client"`  // latchkey or redisson
	Record  *Process `json:"record,omitempty"`
	Holds   *Hold    `json:"holds"` // null where it may hold a semaphore's permit
	// MayHold is the semaphore whose permit it holds if the cycle is one.
	MayHold  string `json:"may_hold,omitempty"`
	WaitsFor Hold   `json:"waits_for"`
	Position int    `json:"position"` // its place in that queue, 1 first
}

// A Hold names a synchronizer and the owner id that holds or waits.
type Hold struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Owner string `json:"owner"`
}

// A Break is the command that breaks a cycle: a force-unlock of one of
// its locks, the holder's process told of it, the next in line served.
type Break struct {
	Command string `json:"command"`
	Name    string `json:"name"`
	Holder  string `json:"holder"` // the process forced out
	Owner   string `json:"owner"`
	Client  string `json:"client"` // the holder's: latchkey's is told, Redisson's never
	Waiter  string `json:"waiter"` // the cycle's process queued for the lock
	First   bool   `json:"first"`  // whether it is first in line: it gets the lock
}

// deadlock describes cycle for -json and the text.
func deadlock(cycle []edge, g *graph) Deadlock {
	var d Deadlock
	for i, e := range cycle {
		in := cycle[(i+len(cycle)-1)%len(cycle)] // the wait for what this process holds
		p := CycleProcess{Process: e.from, Client: "latchkey", Record: g.procs[e.from],
			WaitsFor: Hold{e.st.Name, e.st.Kind, e.waiter.Owner}, Position: e.pos}
		if g.java[e.from] {
			p.Client = "redisson"
		}
		if in.possible {
			p.MayHold = in.st.Name
		} else {
			p.Holds = &Hold{in.st.Name, in.st.Kind, in.holder.Owner}
		}
		d.Possible = d.Possible || e.possible
		d.Processes = append(d.Processes, p)
	}
	if b, ok := breaker(cycle); ok {
		d.Break = &Break{Command: "latchkey unlock " + shellQuote(b.st.Name), Name: b.st.Name, Holder: b.to, Owner: b.holder.Owner,
			Client: b.holder.Client, Waiter: b.from, First: b.pos == 1}
	}
	return d
}

// printCycles prints each cycle, and what the graph could not see.
func printCycles(w io.Writer, asJSON bool, cycles [][]edge, g *graph) error {
	enc := json.NewEncoder(w)
	for i, cy := range cycles {
		d := deadlock(cy, g)
		if asJSON {
			if err := enc.Encode(d); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		printDeadlock(w, d, g)
	}
	if asJSON || len(g.blind) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nnot seen (see deadlocks -h):\n")
	for _, what := range slices.Sorted(maps.Keys(g.blind)) {
		fmt.Fprintf(w, "  %d %s\n", g.blind[what], what)
	}
	return nil
}

func printDeadlock(w io.Writer, d Deadlock, g *graph) {
	if d.Possible {
		fmt.Fprintf(w, "possible deadlock: %d processes, through a semaphore, whose holders nothing records:\n", len(d.Processes))
	} else {
		fmt.Fprintf(w, "deadlock: %d processes wait for each other:\n", len(d.Processes))
	}
	t := newTable(w)
	for _, p := range d.Processes {
		holds := "may hold a permit of " + p.MayHold
		if p.Holds != nil {
			holds = fmt.Sprintf("holds %s (%s)", p.Holds.Name, p.Holds.Kind)
		}
		row(t, "  "+who(p.Process, g), holds, fmt.Sprintf("waits for %s (%s, #%d in its queue)", p.WaitsFor.Name, p.WaitsFor.Kind, p.Position))
	}
	_ = t.Flush()
	if b := d.Break; b != nil {
		told := "told within about a second"
		if b.Client != "latchkey" {
			told = "never told: its watchdog stops at its next renewal"
		}
		next := who(b.Waiter, g) + " gets the lock"
		if !b.First {
			next = "those queued before " + who(b.Waiter, g) + " get the lock first"
		}
		fmt.Fprintf(w, "  to break it: %s   (forces out %s, %s; %s)\n", b.Command, who(b.Holder, g), told, next)
	} else {
		fmt.Fprintf(w, "  no lock in it to force-unlock: release a permit of the semaphore (latchkey release) once its holder is known\n")
	}
}

// who names a process: its host and pid where it recorded itself.
func who(p string, g *graph) string {
	switch {
	case g.procs[p] != nil:
		return g.procs[p].String()
	case g.java[p]:
		return "Java client " + p
	}
	return "process " + p + " (no record)"
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-./@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
