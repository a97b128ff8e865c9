package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// A Fault is one kind of fault an Injector puts in. Apply puts one in,
// drawing its victim and size from rnd, and returns how to heal it and how
// long it lasts; a fault that heals by itself returns a nil heal.
type Fault struct {
	Name   string
	Weight int
	Apply  func(ctx context.Context, rnd *rand.Rand) (heal func(), lasts time.Duration)
}

// An Injector puts a random fault in at every tick until its context ends,
// then heals every fault still in.
type Injector struct {
	r      *Report
	rnd    *rand.Rand
	faults []Fault
	every  time.Duration

	mu     sync.Mutex
	counts map[string]int
}

func newInjector(r *Report, rnd *rand.Rand, every time.Duration, faults ...Fault) *Injector {
	return &Injector{r: r, rnd: rnd, faults: faults, every: every, counts: make(map[string]int)}
}

// Run injects faults until ctx ends, and returns once all are healed.
func (in *Injector) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	total := 0
	for _, f := range in.faults {
		total += f.Weight
	}
	tick := time.NewTicker(in.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f := in.pick(total)
		heal, lasts := f.Apply(ctx, in.rnd)
		in.r.Fault()
		in.mu.Lock()
		in.counts[f.Name]++
		in.mu.Unlock()
		if heal == nil {
			continue
		}
		wg.Go(func() {
			t := time.NewTimer(lasts)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			heal()
		})
	}
}

func (in *Injector) pick(total int) Fault {
	n := in.rnd.IntN(total)
	for _, f := range in.faults {
		if n < f.Weight {
			return f
		}
		n -= f.Weight
	}
	return in.faults[len(in.faults)-1]
}

// String lists how many faults of each kind were injected.
func (in *Injector) String() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(in.counts)) {
		parts = append(parts, fmt.Sprintf("%s=%d", name, in.counts[name]))
	}
	return strings.Join(parts, " ")
}

// between draws a duration in [lo, hi).
func between(rnd *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rnd.Int64N(int64(hi-lo)))
}

// NetFaults are the per-client network faults: latency, requests or
// replies blackholed (for up to longest), and connections reset on a
// request or on a reply.
func NetFaults(proxies []*Proxy, longest time.Duration) []Fault {
	pick := func(rnd *rand.Rand) *Proxy { return proxies[rnd.IntN(len(proxies))] }
	return []Fault{
		{"latency", 4, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return pick(rnd).Latency(between(rnd, 10*time.Millisecond, 250*time.Millisecond), 50*time.Millisecond), between(rnd, 200*time.Millisecond, 2*time.Second)
		}},
		{"blackhole-replies", 2, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return pick(rnd).Blackhole("downstream"), between(rnd, 100*time.Millisecond, longest)
		}},
		{"blackhole-requests", 1, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return pick(rnd).Blackhole("upstream"), between(rnd, 100*time.Millisecond, longest)
		}},
		{"reset-on-reply", 2, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return pick(rnd).Reset("downstream"), between(rnd, 5*time.Millisecond, 50*time.Millisecond)
		}},
		{"reset-on-request", 1, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			return pick(rnd).Reset("upstream"), between(rnd, 5*time.Millisecond, 50*time.Millisecond)
		}},
	}
}

// ServerFaults are the faults put in through the server: CLIENT KILL of a
// normal or a pub/sub connection, SCRIPT FLUSH, and a SIGSTOP shorter than
// pause.
func (e *Standalone) ServerFaults(pause time.Duration) []Fault {
	kill := func(pubsub bool) func(context.Context, *rand.Rand) (func(), time.Duration) {
		return func(ctx context.Context, rnd *rand.Rand) (func(), time.Duration) {
			if ids := clientIDs(ctx, e.Admin, pubsub); len(ids) > 0 {
				_ = e.Admin.Do(ctx, "CLIENT", "KILL", "ID", ids[rnd.IntN(len(ids))]).Err()
			}
			return nil, 0
		}
	}
	return []Fault{
		{"client-kill", 2, kill(false)},
		{"client-kill-pubsub", 1, kill(true)},
		{"script-flush", 1, func(ctx context.Context, _ *rand.Rand) (func(), time.Duration) {
			_ = e.Admin.ScriptFlush(ctx).Err()
			return nil, 0
		}},
		{"sigstop", 1, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
			e.Server.Pause(between(rnd, 20*time.Millisecond, pause))
			return nil, 0
		}},
	}
}
