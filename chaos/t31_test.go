package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/election"
)

// The election soak's shape: its candidates, lease, and how they lead.
const (
	electionCandidates = 4
	electionLease      = time.Second
	// A leader writes to the store at once, then every electionWrites
	// while it leads: a few milliseconds, or, for a share of electionLong
	// of its leaderships, half a lease to two, across renewals.
	electionWrites = 50 * time.Millisecond
	electionLong   = 0.01
	// electionSample is how often the server is asked who leads.
	electionSample = 10 * time.Millisecond
)

// TestT31ElectionChaos (issue 20; the reliability table stops at T30): 4
// candidates, each on its own client through its own proxy, campaign in
// a loop for 25s in one election with a 1s lease: each, once it leads,
// writes its term to a fenced store at once and every 50ms while it
// leads, then resigns. A fault goes in every 200ms: latency, requests or
// replies blackholed for up to 3s, reset connections, CLIENT KILL of
// normal and pub/sub connections, SCRIPT FLUSH, SIGSTOP of the server for
// less than half a lease, and the current leader's requests dropped for
// one to two leases; and on a schedule the server is stopped past the
// lease (1.5s), twice, and killed and restarted empty, twice. Checks: no
// leader while another not told of its loss believes it leads (unless a
// wipe freed it); no term granted twice, terms strictly increase in order
// of leadership start; the store refuses no write from a leader not told
// of its loss; every leadership that ended on the server before its
// Resign was told, with a cause matching ErrLost, within lease/3 of that
// end (lease + 1s of the crash for a wipe); every candidate leads within
// its bound once the faults heal. The history is not checked with
// porcupine: a wipe frees a leadership before its leader can be told,
// which the mutex model cannot express; the checks above cover it.
func TestT31ElectionChaos(t *testing.T) {
	e := newStandalone(t, electionCandidates)
	r := newReport(t)
	h := newHistory()
	nm := name(t, 0)
	et := &electionSoak{r: r, h: h, name: nm, ls: newLeaders(r, h, nm)}
	rnd := rng(t)
	var cands []*elector
	for i, c := range e.Clients {
		cands = append(cands, &elector{i, election.New(c, nm, election.WithLeaseTimeout(electionLease)), newRand(rnd, i)})
	}
	sctx, stopSampling := context.WithCancel(context.Background())
	defer stopSampling()
	sampled := make(chan []sample, 1)
	go func() { sampled <- sampleLeaders(sctx, h, election.New(e.Admin, nm), electionSample) }()

	d := soak(25 * time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	inj := newInjector(r, rand.New(rand.NewPCG(rnd.Uint64(), 0)), 200*time.Millisecond,
		append(append(NetFaults(e.Proxies, 3*time.Second), e.ServerFaults(electionLease/2)...), et.leaderCut(e))...)
	var wg sync.WaitGroup
	wg.Go(func() { inj.Run(ctx) })
	for _, c := range cands {
		wg.Go(func() {
			for ctx.Err() == nil {
				et.cycle(ctx, c, 2*backstop, electionLong)
			}
		})
	}
	et.schedule(t, ctx, e, d)
	wg.Wait()
	e.Heal()
	t.Logf("faults: %s", inj)

	var settle sync.WaitGroup
	for _, c := range cands {
		settle.Go(func() {
			bound := electionLease + backstop + 2*time.Second
			if !et.cycle(t.Context(), c, bound, 0) {
				r.Violation("client %d could not lead within %v once the faults had healed", c.client, bound)
			}
		})
	}
	settle.Wait()
	time.Sleep(3 * electionSample) // the last resignation, sampled
	stopSampling()
	samples := <-sampled
	ls := et.ls
	t.Logf("%d operations, %d samples of the leader; %v", h.Len(), len(samples), ls.checkSignals(samples, electionLease))
	t.Logf("store: %d writes accepted, %d refused from leaders told of their loss, %d from leaders a wipe deposed; %d leaders overlapped one a wipe freed",
		ls.accepted, ls.refused, ls.wipedStale, ls.wipedOverlaps)
	checkTokens(r, h.Ops())
}

// An elector is one candidate: its client's number and Election handle.
type elector struct {
	client int
	e      *election.Election
	rnd    *rand.Rand
}

// An electionSoak runs the candidates of TestT31ElectionChaos, recording
// their operations in h and their leaderships in ls.
type electionSoak struct {
	r    *Report
	h    *History
	name string
	ls   *Leaders
}

// cycle campaigns within timeout, leads (long with probability long),
// writing to the store, and resigns, recording each step. It reports
// whether c led.
func (et *electionSoak) cycle(ctx context.Context, c *elector, timeout time.Duration, long float64) bool {
	epoch, call := et.ls.epoch(), et.h.Now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	lctx, err := c.e.Campaign(cctx, strconv.Itoa(c.client))
	cancel() // the leadership's context does not end with cctx
	ret := et.h.Now()
	if err != nil {
		et.h.Add(Op{Client: c.client, Name: et.name, Kind: Acquire, Outcome: Unknown, Call: call, Return: ret})
		return false
	}
	// Term is 0 if the leadership already ended: then there is no term
	// to write, and the tokens check leaves it out.
	l := &leadership{client: c.client, term: c.e.Term(), epoch: epoch, called: call, start: ret, ctx: lctx}
	et.h.Add(Op{Client: c.client, Name: et.name, Kind: Acquire, Outcome: OK, Token: l.term, Call: call, Return: ret})
	et.r.Acquired(1)
	et.ls.begin(l)
	d := time.Duration(c.rnd.Int64N(int64(5 * time.Millisecond)))
	if c.rnd.Float64() < long {
		d = between(c.rnd, electionLease/2, 2*electionLease)
	}
	et.lead(l, d)
	et.ls.resigning(l)
	et.resign(ctx, c)
	return true
}

// lead writes l's term to the store at once and every electionWrites for
// d, as long as its context says it leads: a careful leader's check.
func (et *electionSoak) lead(l *leadership, d time.Duration) {
	until := time.Now().Add(d)
	for {
		checked := et.h.Now()
		if l.ctx.Err() != nil {
			return
		}
		et.ls.write(l, checked)
		left := time.Until(until)
		if left <= 0 {
			return
		}
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(min(left, electionWrites)):
		}
	}
}

// resignTries is how often a leader tries a Resign that failed without
// an answer: a leader that stays would keep the others out.
const resignTries = 10

// resign gives c's leadership up, trying again while the outcome is
// unknown. ErrNotHeld (the leadership was lost) is a refused release.
func (et *electionSoak) resign(ctx context.Context, c *elector) {
	for range resignTries {
		call := et.h.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		err := c.e.Resign(rctx)
		cancel()
		op := Op{Client: c.client, Name: et.name, Kind: Release, Outcome: OK, Call: call, Return: et.h.Now()}
		switch {
		case errors.Is(err, latchkey.ErrNotHeld):
			op.Outcome = Refused
		case err != nil:
			op.Outcome = Unknown
		}
		et.h.Add(op)
		if op.Outcome != Unknown {
			return
		}
	}
}

// leaderCut is the fault that cuts the current leader off for one to two
// leases: its requests are dropped, so the server hears nothing more from
// it; the others must wait for its lease, and it must be told of its loss
// by then.
func (et *electionSoak) leaderCut(e *Standalone) Fault {
	return Fault{"leader-cut", 3, func(_ context.Context, rnd *rand.Rand) (func(), time.Duration) {
		c, _ := et.ls.current()
		if c < 0 {
			return nil, 0
		}
		return e.Proxies[c].Blackhole("upstream"), between(rnd, electionLease, 2*electionLease)
	}}
}

// schedule stops the server past the lease at a fifth and three fifths of
// the soak of d, and kills it and restarts it empty at two and four
// fifths, each time once a leader is in a long lead (or 3s later), unless
// ctx ends first.
func (et *electionSoak) schedule(t *testing.T, ctx context.Context, e *Standalone, d time.Duration) {
	start := time.Now()
	for k := 1; k <= 4; k++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(d * time.Duration(k) / 5))):
		}
		et.untilLongLead(ctx, 3*time.Second)
		if k%2 == 1 {
			e.Server.Pause(electionLease + electionLease/2)
		} else {
			at := et.h.Now()
			e.Server.Kill()
			et.ls.wiped(at)
			e.Server.Restart(t)
		}
		et.r.Fault()
	}
}

// untilLongLead waits, up to limit, until the current leader has led for
// 50ms: one in a long lead, which the fault then strikes, rather than one
// about to resign.
func (et *electionSoak) untilLongLead(ctx context.Context, limit time.Duration) {
	for end := time.Now().Add(limit); ctx.Err() == nil && time.Now().Before(end); time.Sleep(time.Millisecond) {
		if c, led := et.ls.current(); c >= 0 && led >= 50*time.Millisecond {
			return
		}
	}
}
