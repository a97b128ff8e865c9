package main

import (
	"context"
	"slices"
	"time"
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
	// Cluster marks a scenario that runs on a Redis Cluster of
	// clusterMasters masters, which the suite starts: its Env is the
	// cluster's, and only impls on Redis run it. Skipped, with a note, where
	// no redis-server can be started.
	Cluster bool
	// Callgrind marks a scenario that runs on a redis-server under
	// valgrind's callgrind, which the suite starts (callgrind.go): its Env
	// is that server's. Skipped, with a note, where valgrind or
	// redis-server is not installed, and on miniredis.
	Callgrind bool
	// Only, if set, limits the scenario to these impls (of its kinds or
	// Also): variants that cannot differ in it are left out.
	Only []string
	// Rows, if set, is the scenario's table, for stdout and the report:
	// its column heads and rows, in place of a row per impl.
	Rows func(rs []*Result) (heads []string, rows [][]string)
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
	switch {
	case s.Only != nil && !slices.Contains(s.Only, im.Name):
		return false
	case (s.Cluster || s.Callgrind) && !im.onRedis():
		return false
	case im.Optional:
		return slices.Contains(s.Also, im.Name)
	}
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
	Handoffs   []time.Duration // Unlock call to the next acquisition that was waiting
	Held       time.Duration   // union of [Lock return, Unlock return]: the server's view
	UserHeld   time.Duration   // union of [Lock return, Unlock call]: time in the critical section
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
	// Windows are the instructions scenario's measured windows.
	Windows []Window
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
