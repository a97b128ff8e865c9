package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/latchkey/latchkey"
)

// The instructions scenario counts what one operation costs the server in
// instructions executed, on a redis-server under valgrind's callgrind: a
// figure that does not depend on the machine's load, unlike the CPU µs of
// the other scenarios. Each case is a window of InstrOps operations after
// a warm-up of instrWarm, between a zero and a dump of the server's
// counters (callgrind.go), less what serverCron executed in the window.
const (
	instrOps  = 2000 // operations per window, by default (-instr-ops)
	instrWarm = 200  // unmeasured operations before a window, at most
	// instrSettle is how long a window waits, before it zeroes the
	// counters and before it dumps them, for what the clients send
	// without waiting (Redisson's UNSUBSCRIBE, a latch's DEL in flight) to
	// reach the server: the warm-up's before the window, the window's in
	// it.
	instrSettle = 200 * time.Millisecond
)

// The cases of the scenario, in the order of its table.
const (
	caseKept    = "kept handle"
	caseNew     = "new handle"
	caseOwner   = "WithOwner"
	caseHandoff = "handoff"
)

// instrYardstick is the impl each case's ratio divides by: Redisson's
// RFencedLock protocol, since latchkey's mutex always fences.
const instrYardstick = "redisson-fenced"

func init() {
	registerScenario(&Scenario{
		Name: "instructions", Rank: 80, Kinds: []Kind{KindMutex}, Workers: 2, Table: tableCustom,
		Only: []string{targetImpl, instrYardstick, "redisson", "redislock-linear"}, Also: []string{instrYardstick},
		Optional: true, Callgrind: true,
		About: "optional, needs valgrind: server instructions per operation, counted by callgrind on a redis-server " +
			"under valgrind (20-50x slower: about 40 s per impl and round), in windows of -instr-ops operations " +
			"after a warm-up, serverCron's instructions taken out. Uncontended Lock+Unlock with a kept handle, a new " +
			"handle per Lock (mutex.New per op) and latchkey.WithOwner (one owner ctx for the window); peers send " +
			"the same commands in all three. Handoff: two clients alternate on one lock, one op is one acquisition " +
			"that waited: the waiter's attempts until it sleeps, the holder's release that wakes or grants it, and " +
			"what the waiter sends until it holds (a poller: one refused try, the release, the try that takes it).",
		Run:  onCallgrind(instructionsRun),
		Rows: instrRows,
	})
}

// onCallgrind runs a Callgrind scenario's run function on the server under
// callgrind.
func onCallgrind(run func(context.Context, *Env, *Impl, time.Duration) (*Run, error)) func(
	context.Context, *Env, *Impl, time.Duration) (*Run, error) {
	return func(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
		cenv := env.CallgrindEnv
		if cenv == nil {
			return nil, errors.New("no redis-server under callgrind")
		}
		cenv.Round, cenv.Rounds, cenv.InstrOps, cenv.InstrDumps = env.Round, env.Rounds, env.InstrOps, env.InstrDumps
		return run(ctx, cenv, im, d)
	}
}

// A Window is one measured window of the instructions scenario.
type Window struct {
	Case  string `json:"case"`
	Round int    `json:"round"`
	Ops   int    `json:"ops"`
	// Instructions is what the server executed in the window, serverCron
	// left out; Cron is what serverCron executed, taken out.
	Instructions int64   `json:"instructions"`
	Cron         int64   `json:"cron_instructions"`
	PerOp        float64 `json:"instructions_per_op"`
	// Sent are the commands the clients sent per op, scripts by name, and
	// the pub/sub commands INFO commandstats counted; Commands every
	// command commandstats counted per op, those scripts ran included.
	Sent     map[string]float64 `json:"sent_per_op"`
	Commands float64            `json:"commands_per_op"`
	Seconds  float64            `json:"seconds"`
}

// An instrCase prepares the operation a window repeats, on handles of im
// over the scenario's two clients, and what ends it.
type instrCase struct {
	name string
	prep func(ctx context.Context, env *Env, im *Impl, cs *Clients, probes [2]*waitProbe) (op func(context.Context) error, end func(), err error)
}

var instrCases = []instrCase{
	{caseKept, keptHandle},
	{caseNew, newHandle},
	{caseOwner, withOwner},
	{caseHandoff, handoffOp},
}

func instructionsRun(ctx context.Context, env *Env, im *Impl, _ time.Duration) (*Run, error) {
	cs, err := env.NewClients(ctx, im, 2, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	sent := newSentMix()
	var probes [2]*waitProbe
	for i, c := range cs.List {
		probes[i] = newWaitProbe(im.Name)
		c.Client.AddHook(cmdHook{before: sent.add, after: probes[i].saw})
	}
	if env.InstrDumps != "" {
		if err := os.MkdirAll(env.InstrDumps, 0o755); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	m := startMeter(ctx, env, cs)
	run := &Run{PerWorker: []int{0}}
	for _, c := range instrCases {
		// Each case starts on an empty server with a new Lua VM, so that
		// it pays for no other case's keys or Lua heap, whatever the
		// order: over rounds, the figures then repeat within 1%, where
		// they drifted up by 1.5% on a server that kept everything.
		if err := env.Control.FlushAll(ctx).Err(); err != nil {
			return nil, err
		}
		if err := env.Control.ScriptFlush(ctx).Err(); err != nil {
			return nil, err
		}
		op, end, err := c.prep(ctx, env, im, cs, probes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		keep := ""
		if env.InstrDumps != "" {
			keep = filepath.Join(env.InstrDumps, fmt.Sprintf("%s-%s-r%d.callgrind", im.Name,
				strings.ReplaceAll(c.name, " ", "-"), env.Round))
		}
		w, err := measureWindow(ctx, env, sent, op, keep)
		end()
		if errors.Is(err, errEarly) {
			run.Violations++
			run.Errors, run.FirstErr = run.Errors+1, c.name+": "+err.Error()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		w.Case, w.Round = c.name, env.Round
		run.Windows = append(run.Windows, w)
		run.Ops += w.Ops
	}
	run.Use = m.stop(ctx)
	run.Wall = time.Since(start)
	run.PerWorker[0] = run.Ops
	return run, nil
}

// measureWindow runs op unmeasured instrWarm times (a tenth of the window
// at most), then env.InstrOps times between a zero and a dump of the
// server's counters, whose profile it copies to keep unless that is "".
func measureWindow(ctx context.Context, env *Env, sent *sentMix, op func(context.Context) error, keep string) (Window, error) {
	for range min(instrWarm, max(env.InstrOps/10, 2)) {
		if err := op(ctx); err != nil {
			return Window{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	sleep(ctx, instrSettle)
	before, err := commandStats(ctx, env)
	if err != nil {
		return Window{}, err
	}
	if err := env.Callgrind.zero(ctx); err != nil {
		return Window{}, err
	}
	sent.reset()
	start := time.Now()
	for range env.InstrOps {
		if err := op(ctx); err != nil {
			return Window{}, err
		}
		env.Ops.Add(1)
	}
	wall := time.Since(start)
	sleep(ctx, instrSettle)
	total, cron, err := env.Callgrind.dump(ctx, keep)
	if err != nil {
		return Window{}, err
	}
	after, err := commandStats(ctx, env)
	if err != nil {
		return Window{}, err
	}
	n := float64(env.InstrOps)
	w := Window{Ops: env.InstrOps, Instructions: total - cron, Cron: cron, PerOp: float64(total-cron) / n,
		Sent: sent.perOp(n), Seconds: wall.Seconds()}
	for name, a := range after {
		if setupCommands[name] {
			continue
		}
		calls := a.calls - before[name].calls
		w.Commands += float64(calls) / n
		if slices.Contains(outsideScripts, name) && calls > 0 {
			w.Sent[name] = float64(calls) / n
		}
	}
	return w, nil
}

// lockUnlock is one uncontended operation: Lock, then Unlock, of h with
// ctx.
func lockUnlock(ctx context.Context, h Locker) error {
	if err := h.Lock(ctx); err != nil {
		return err
	}
	return h.Unlock(ctx)
}

func keptHandle(ctx context.Context, env *Env, im *Impl, cs *Clients, _ [2]*waitProbe) (func(context.Context) error, func(), error) {
	h, err := handle[Locker](ctx, im, cs.List[0], env.Name("instructions", im.Name))
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) error { return lockUnlock(ctx, h) }, func() {}, nil
}

// newHandle makes latchkey's handle afresh for every Lock, as code that
// locks per order does. A peer sends the same commands whatever its
// handle (Redisson's latch DEL goes with the handle's next command, which
// a new handle would never send): its handle is kept.
func newHandle(ctx context.Context, env *Env, im *Impl, cs *Clients, p [2]*waitProbe) (func(context.Context) error, func(), error) {
	if im.Name != targetImpl {
		return keptHandle(ctx, env, im, cs, p)
	}
	name := env.Name("instructions", im.Name)
	return func(ctx context.Context) error {
		h, err := handle[Locker](ctx, im, cs.List[0], name)
		if err != nil {
			return err
		}
		return lockUnlock(ctx, h)
	}, func() {}, nil
}

// withOwner locks with latchkey.WithOwner: one owner for the whole window,
// as a goroutine marked once. A peer's owner is its client's in every
// case: its handle is kept.
func withOwner(ctx context.Context, env *Env, im *Impl, cs *Clients, p [2]*waitProbe) (func(context.Context) error, func(), error) {
	op, end, err := keptHandle(ctx, env, im, cs, p)
	if err != nil || im.Name != targetImpl {
		return op, end, err
	}
	owner := latchkey.WithOwner(ctx)
	return func(ctx context.Context) error { return op(owner) }, end, nil
}
