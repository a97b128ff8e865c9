package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// The election scenario's size and pacing. Each fault case fails
// electionFailovers leaders per impl, spread over the rounds; a smoke run
// (under a second per impl) fails one per case and round, the cases at
// once, so that the suite's tests stay short.
const (
	electionFailovers = 5
	// The fault falls electionSettle after the leader's Campaign returned
	// (its successor is queued by then), plus a phase: the failovers of a
	// case, over all rounds, spread their phases evenly over
	// electionPhases, more than a renewal period of either system, so the
	// faults sample every point of it, the same points for both.
	electionSettle = 100 * time.Millisecond
	electionPhases = time.Second
	// electionBound is the longest a successor's Campaign may take.
	electionBound = 15 * time.Second
)

// An electionFault is one way the leader fails: the name of its series and
// chart, whether the leader talks through a cutProxy, and how to inject it.
type electionFault struct {
	series, chart string
	proxied       bool
	inject        func(c *candidate, p *cutProxy) error
}

var electionFaults = []electionFault{
	{"failover, leader killed", "failover-killed", false,
		func(c *candidate, _ *cutProxy) error { return c.signal(syscall.SIGKILL) }},
	{"failover, leader paused", "failover-paused", false,
		func(c *candidate, _ *cutProxy) error { return c.signal(syscall.SIGSTOP) }},
	{"failover, leader cut off", "failover-cut", true,
		func(_ *candidate, p *cutProxy) error { p.Cut(); return nil }},
}

// The fourth case: the leader resigns.
const (
	seriesHandoff = "handoff, leader resigned"
	chartHandoff  = "handoff-resigned"
)

// electionCharts returns the election's series and the names of their
// charts, which targets mark.
func electionCharts() (series, charts []string) {
	for _, f := range electionFaults {
		series, charts = append(series, f.series), append(charts, f.chart)
	}
	return append(series, seriesHandoff), append(charts, chartHandoff)
}

func init() {
	registerScenario(&Scenario{
		Name: "election", Rank: 90, Kinds: []Kind{KindElection}, Workers: 2, Table: tableCustom, Optional: true,
		About: fmt.Sprintf("Leader failover, both systems with a %v lease (latchkey WithLeaseTimeout(%v), etcd session "+
			"TTL %ds, its minimum). The leader is a child process (this binary again) on its own connections; its "+
			"successor campaigns in the bench on its own client. Failover runs from the fault to the successor's "+
			"Campaign return: the leader killed (SIGKILL: the kernel closes its connections, nothing resigns), "+
			"paused (SIGSTOP, until the successor leads), or cut off (its connections go through a proxy in the "+
			"bench that then drops every byte both ways and keeps them open). The fault falls %v plus a phase "+
			"after the leader's Campaign returned, the phases of a case spread evenly over %v (over all rounds), "+
			"the same for both systems. A "+
			"failover can take no less than the lease minus the time since the leader's last renewal. "+
			"Handoff runs from a leader's Resign call to the waiting candidate's Campaign return (both in the "+
			"bench). %d of each per impl, spread over the rounds; a run under 1s per impl (go test) does one of "+
			"each per round, the cases at once. A violation is a successor that led before the fault, or a term not above its "+
			"predecessor's.",
			electionLease, electionLease, electionTTL, electionSettle, electionPhases, electionFailovers),
		Run:    electionRun,
		Finish: electionFinish,
	})
}

// electionTrials is one impl's run of the election scenario.
type electionTrials struct {
	env  *Env
	im   *Impl
	addr string // of the impl's server

	mu  sync.Mutex
	run *Run
	w   worker
}

func electionRun(ctx context.Context, env *Env, im *Impl, d time.Duration) (*Run, error) {
	er := &electionTrials{env: env, im: im, addr: env.Addr, run: &Run{}}
	if im.Peer != nil {
		er.addr = env.Peers[im.Peer].Addr
	}
	// A successor per fault case, and a leader and a successor to resign.
	cs, err := env.NewClients(ctx, im, len(electionFaults)+2, false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var names []string // one per case: the last two handles share the last
	hs := make([]Elector, len(cs.List))
	for i, c := range cs.List {
		if i <= len(electionFaults) {
			names = append(names, env.Name("election", im.Name))
		}
		if hs[i], err = handle[Elector](ctx, im, c, names[len(names)-1]); err != nil {
			return nil, err
		}
	}
	js, all, together := electionPlan(env, d)
	m := startMeter(ctx, env, cs)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i, f := range electionFaults {
		cycle := func() {
			for _, j := range js {
				phase := electionSettle + electionPhases*time.Duration(2*j+1)/time.Duration(2*all)
				er.record(f.series, er.failover(ctx, f, names[i], hs[i], phase))
			}
		}
		if together {
			wg.Go(cycle)
		} else {
			cycle()
		}
	}
	wg.Wait()
	a, b := hs[len(hs)-2], hs[len(hs)-1]
	for range js {
		er.record(seriesHandoff, er.handoff(ctx, a, b))
	}
	run := er.run
	run.Wall = time.Since(t0)
	run.Use = m.stop(ctx)
	run.PerWorker = []int{run.Ops}
	run.Errors, run.FirstErr = er.w.errors, er.w.firstErr
	return run, nil
}

// electionPlan returns the failovers of each case that the current round
// makes, as their indices among all the rounds' (round r makes the r-th,
// the r-th after it, ...), how many those are, and whether to run the
// cases at once: a smoke run (under a second per impl) makes one per
// round.
func electionPlan(env *Env, d time.Duration) (js []int, all int, together bool) {
	rounds, round := max(env.Rounds, 1), max(env.Round, 1)
	all = electionFailovers
	if together = d < time.Second; together {
		all = rounds
	}
	for j := round - 1; j < all; j += rounds {
		js = append(js, j)
	}
	return js, all, together
}

// A trial is the outcome of one failover or handoff.
type trial struct {
	took      time.Duration // fault (or Resign call) to the successor's Campaign return
	err       error         // the trial could not be measured
	violation string        // two leaders at once, or a term that did not increase
}

func (er *electionTrials) record(series string, t trial) {
	er.mu.Lock()
	defer er.mu.Unlock()
	switch {
	case t.violation != "":
		er.run.Violations++
		er.w.fail(fmt.Errorf("%s: %s", series, t.violation))
	case t.err != nil:
		er.w.fail(fmt.Errorf("%s: %w", series, t.err))
	default:
		er.run.addSeries(series, t.took)
		er.run.Ops++
		er.env.Ops.Add(1)
	}
}

// A campaign is a candidate's Campaign running in the background.
type campaign struct {
	e        Elector
	res      chan campaignResult
	got      *campaignResult
	cancel   context.CancelFunc
	resigned bool
}

type campaignResult struct {
	at   time.Time
	term int64
	err  error
}

// startCampaign starts e's Campaign, bounded by electionBound.
func startCampaign(ctx context.Context, e Elector, value string) *campaign {
	cctx, cancel := context.WithTimeout(ctx, electionBound)
	c := &campaign{e: e, res: make(chan campaignResult, 1), cancel: cancel}
	go func() {
		term, err := e.Campaign(cctx, value)
		c.res <- campaignResult{time.Now(), term, err}
	}()
	return c
}

// result waits for the Campaign to return.
func (c *campaign) result() campaignResult {
	if c.got == nil {
		r := <-c.res
		c.got = &r
	}
	return *c.got
}

// returned reports whether the Campaign has returned by now.
func (c *campaign) returned() bool {
	if c.got == nil {
		select {
		case r := <-c.res:
			c.got = &r
		default:
		}
	}
	return c.got != nil
}

// end stops the Campaign, and resigns the leadership it won, once: a
// leader left behind would lead every later trial.
func (c *campaign) end(ctx context.Context) error {
	c.cancel()
	if c.result().err != nil || c.resigned {
		return nil
	}
	c.resigned = true
	return resign(ctx, c.e)
}

// failover makes a child candidate lead the election name, has succ
// campaign behind it, fails the leader with f at phase after it led, and
// measures how long succ then takes to lead.
func (er *electionTrials) failover(ctx context.Context, f electionFault, name string, succ Elector, phase time.Duration) trial {
	addr := er.addr
	var p *cutProxy
	if f.proxied {
		var err error
		if p, err = startCutProxy(addr); err != nil {
			return trial{err: err}
		}
		defer p.Close()
		addr = p.Addr()
	}
	c, err := startCandidate(er.im, addr, name)
	if err != nil {
		return trial{err: err}
	}
	defer c.kill()
	term, err := c.lead(electionBound)
	if err != nil {
		return trial{err: err}
	}
	led := time.Now()
	sc := startCampaign(ctx, succ, "successor")
	defer func() { _ = sc.end(ctx) }()
	sleep(ctx, time.Until(led.Add(phase)))
	if sc.returned() {
		if r := sc.result(); r.err == nil {
			return trial{violation: fmt.Sprintf("the successor led (term %d) while the leader (term %d) was sound", r.term, term)}
		}
		return trial{err: fmt.Errorf("successor's Campaign, before the fault: %w", sc.result().err)}
	}
	fault := time.Now()
	if err := f.inject(c, p); err != nil {
		return trial{err: err}
	}
	return measured(ctx, sc, fault, term)
}

// measured waits for the successor's campaign sc after the leader of term
// ended (failed or resigned) at from, and returns the time it took.
func measured(ctx context.Context, sc *campaign, from time.Time, term int64) trial {
	r := sc.result()
	if r.err != nil {
		return trial{err: fmt.Errorf("successor's Campaign: %w", r.err)}
	}
	if err := sc.end(ctx); err != nil {
		return trial{err: err}
	}
	if r.term <= term {
		return trial{violation: fmt.Sprintf("the successor's term %d is not above its predecessor's %d", r.term, term)}
	}
	return trial{took: r.at.Sub(from)}
}

// handoff makes a lead, has b campaign behind it, and measures how long
// after a's Resign call b leads.
func (er *electionTrials) handoff(ctx context.Context, a, b Elector) trial {
	sa := startCampaign(ctx, a, "a")
	defer func() { _ = sa.end(ctx) }()
	ra := sa.result()
	if ra.err != nil {
		return trial{err: fmt.Errorf("first Campaign: %w", ra.err)}
	}
	sb := startCampaign(ctx, b, "b")
	defer func() { _ = sb.end(ctx) }()
	sleep(ctx, electionSettle)
	if sb.returned() {
		if r := sb.result(); r.err == nil {
			return trial{violation: fmt.Sprintf("the second candidate led (term %d) while the first (term %d) did", r.term, ra.term)}
		}
		return trial{err: fmt.Errorf("second Campaign, before the Resign: %w", sb.result().err)}
	}
	resigned := time.Now()
	if err := sa.end(ctx); err != nil {
		return trial{err: err}
	}
	return measured(ctx, sb, resigned, ra.term)
}

// resign ends e's leadership, whatever ctx says.
func resign(ctx context.Context, e Elector) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.Resign(rctx); err != nil {
		return fmt.Errorf("Resign: %w", err)
	}
	return nil
}

// electionFinish keeps the scenario's counts, not their sums over rounds.
func electionFinish(r *Result) {
	r.Extra = map[string]float64{"lease s": electionLease.Seconds()}
	for _, f := range electionFaults {
		r.Extra["failovers"] += float64(r.Series[f.series].N)
	}
	r.Extra["handoffs"] = float64(r.Series[seriesHandoff].N)
}
