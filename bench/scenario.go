package main

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Scenario is a workload that every selected impl of its kinds runs, on
// the same server with the same parameters, interleaved round by round.
type Scenario struct {
	Name    string
	Rank    int    // order of runs and tables, lowest first
	Kinds   []Kind // impls of these kinds run it
	Workers int    // for the report
	About   string // one line for the report
	// Contended scenarios report throughput, utilization and waits; the
	// others report Lat, one operation's latency, unless Table says custom.
	Contended bool
	Table     int // tableAuto, or tableCustom: only Extra and Series
	// Optional scenarios run only when named (or with "all").
	Optional bool
	// Also names impls that run besides those of Kinds, for comparison.
	Also []string
	// Finish, if set, derives the scenario's own figures from Extra.
	Finish func(r *Result)
	// Nodes is how many independent masters the scenario needs besides the
	// main server (redlock); the suite starts them.
	Nodes int
	// Replication marks a scenario that attaches a replica to the main
	// server: skipped, with a note, on miniredis.
	Replication bool
	// Run runs im once for d and returns what it measured.
	Run func(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error)
}

// Scenario.Table values.
const (
	tableAuto = iota
	tableCustom
)

var scenarios []*Scenario

func registerScenario(s *Scenario) {
	scenarios = append(scenarios, s)
	slices.SortStableFunc(scenarios, func(a, b *Scenario) int { return a.Rank - b.Rank })
}

// runs reports whether im takes part in s.
func (s *Scenario) runs(im *Impl) bool {
	return slices.Contains(s.Kinds, im.Kind) || slices.Contains(s.Also, im.Name)
}

// selectScenarios returns the scenarios named in the comma-separated list,
// all of them for "all", and the non-optional ones for "default" or "".
func selectScenarios(list string) ([]*Scenario, error) {
	switch list {
	case "all":
		return scenarios, nil
	case "", "default":
		var out []*Scenario
		for _, s := range scenarios {
			if !s.Optional {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return pick("scenario", scenarios, list, func(s *Scenario) string { return s.Name })
}

// A Run is what one impl measured in one round of one scenario.
type Run struct {
	Wall       time.Duration   // the measured window
	Waits      []time.Duration // Lock call to Lock return, per acquisition
	Handoffs   []time.Duration // release to the next acquisition that was waiting
	Held       time.Duration   // union of acquire..release intervals
	PerWorker  []int           // acquisitions per worker
	Lat        []time.Duration // uncontended: one Lock+Unlock
	Pings      []time.Duration // PING round trips measured in the same run
	IdlePings  []time.Duration // PING round trips just before the run, on an idle server
	Ops        int             // acquisitions
	Use        usage           // what the server saw
	Errors     int
	GiveUps    int
	Violations int
	FirstErr   string
	Extra      map[string]float64 // scenario-specific counts, summed over rounds
	// Series are scenario-specific samples (a reader's and a writer's wait),
	// merged over rounds and summarized like Waits.
	Series map[string][]time.Duration
}

func (r *Run) addSeries(name string, d time.Duration) {
	if r.Series == nil {
		r.Series = map[string][]time.Duration{}
	}
	r.Series[name] = append(r.Series[name], d)
}

func (r *Run) addExtra(name string, v float64) {
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	r.Extra[name] += v
}

// Env is what a scenario needs from the suite.
type Env struct {
	Addr     string
	Nodes    []string // independent masters for scenarios that span several
	Mini     bool
	Control  *redis.Client   // INFO and PING probes; never used by workers
	Controls []*redis.Client // Control, then one per node: every server a run may touch
	Ops      atomic.Int64    // acquisitions so far, for the progress line
	seq      atomic.Int64
}

// Name returns a key name no earlier run used, in its own hash slot.
func (e *Env) Name(scenario, impl string) string {
	return fmt.Sprintf("bench:{%s:%s:%d}", scenario, impl, e.seq.Add(1))
}

// Clients is the workers' connections, whose sent commands are counted.
type Clients struct {
	List []*Conn
	sent atomic.Int64 // commands sent through Process/ProcessPipeline
	ping atomic.Int64 // of which PINGs
}

// NewClients returns n Conns, one per worker as n processes would have,
// with clients on the nodes too if nodes is set; each client is connected
// and warmed up with a PING (not counted).
func (e *Env) NewClients(ctx context.Context, n int, nodes bool) (*Clients, error) {
	cs := &Clients{}
	dial := func(addr string) (*redis.Client, error) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		if err := c.Ping(ctx).Err(); err != nil {
			_ = c.Close()
			return nil, err
		}
		c.AddHook(counter{cs})
		return c, nil
	}
	for range n {
		c, err := dial(e.Addr)
		if err != nil {
			cs.Close(nil)
			return nil, err
		}
		conn := &Conn{Client: c}
		cs.List = append(cs.List, conn)
		for _, addr := range e.Nodes {
			if !nodes {
				break
			}
			nc, err := dial(addr)
			if err != nil {
				cs.Close(nil)
				return nil, err
			}
			conn.Nodes = append(conn.Nodes, nc)
		}
	}
	return cs, nil
}

// Close runs im.Close on every Conn, if im has one, then closes the clients.
func (cs *Clients) Close(im *Impl) {
	for _, c := range cs.List {
		if im != nil && im.Close != nil {
			im.Close(c)
		}
		_ = c.Client.Close()
		for _, n := range c.Nodes {
			_ = n.Close()
		}
	}
}

// counter counts the commands a worker client sends. Pub/sub connections
// bypass hooks: their commands are taken from commandstats (see meter).
type counter struct{ cs *Clients }

func (h counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch name := cmd.Name(); {
		case setupCommands[name]:
		case name == "ping":
			h.cs.ping.Add(1)
			h.cs.sent.Add(1)
		default:
			h.cs.sent.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.cs.sent.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// pings measures n PING round trips on c.
func pings(ctx context.Context, c *redis.Client, n int) []time.Duration {
	var out []time.Duration
	for range n {
		t := time.Now()
		if c.Ping(ctx).Err() == nil {
			out = append(out, time.Since(t))
		}
	}
	return out
}

// pinger measures a PING round trip on c every interval until ctx ends,
// declaring each to m, and returns them.
func pinger(ctx context.Context, c *redis.Client, every time.Duration, m *meter) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var ds []time.Duration
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				out <- ds
				return
			case <-t.C:
			}
			start := time.Now()
			m.probe(1)
			if c.Ping(ctx).Err() == nil {
				ds = append(ds, time.Since(start))
			}
		}
	}()
	return out
}
