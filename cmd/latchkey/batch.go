package main

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// A round is one round trip that the reads of many names share: the
// commands each read queues on p, sent as one pipeline, and the channels
// whose subscribers each wants counted, counted once for all of them.
type round struct {
	ctx   context.Context
	p     redis.Pipeliner
	count []string
	// After the round: counts by channel (nil where the server would not
	// count), countErr the counting's failure, and err the pipeline's
	// (its first command's error, or its own when it failed as a whole).
	counts   map[string]int64
	countErr error
	err      error
}

// A step queues one read's commands on a round, and returns the function
// that reads their replies once the round ran: it returns the read's next
// step, nil once it is done.
type step func(r *round) (after func() (step, error))

// runSteps runs one read per step in shared rounds, until every read is
// done or failed, and returns each one's error. The rounds are as many as
// the longest read has steps, however many reads there are.
func runSteps(ctx context.Context, c *conn, self selfListens, steps []step) []error {
	steps = slices.Clone(steps)
	errs := make([]error, len(steps))
	afters := make([]func() (step, error), len(steps))
	for {
		r := &round{ctx: ctx, p: c.client.Pipeline()}
		live := 0
		for i, s := range steps {
			afters[i] = nil
			if s != nil {
				afters[i] = s(r)
				live++
			}
		}
		if live == 0 {
			return errs
		}
		if r.p.Len() > 0 {
			_, r.err = r.p.Exec(ctx)
		}
		if len(r.count) > 0 {
			slices.Sort(r.count)
			r.counts, r.countErr = subscribers(ctx, c, slices.Compact(r.count), self)
		}
		for i, after := range afters {
			if after == nil {
				continue
			}
			steps[i], errs[i] = after()
			if errs[i] != nil {
				steps[i] = nil
			}
		}
	}
}

// A request asks for one name's state, read as kind ("" to detect it).
type request struct{ name, kind string }

// readMany returns the state of each request, in order, read in shared
// rounds (see runSteps): a handful of round trips for any number of
// names. A name whose read failed has a nil state and its error in errs.
// Nothing is purged or reclaimed: it only reads. The caller's own
// subscriptions (self: a watch's) are not counted among the listeners.
func readMany(ctx context.Context, c *conn, reqs []request, self selfListens) ([]*State, []error) {
	states := make([]*State, len(reqs))
	steps := make([]step, len(reqs))
	for i, q := range reqs {
		states[i] = newState(q.name, q.kind)
		steps[i] = readStep(c, states[i], q.kind)
	}
	errs := runSteps(ctx, c, self, steps)
	for i, err := range errs {
		if err != nil {
			states[i] = nil
			continue
		}
		annotate(states[i])
	}
	return states, errs
}

// read returns the state of name as a synchronizer of kind ("" to detect).
func read(ctx context.Context, c *conn, name, kind string) (*State, error) {
	return readAs(ctx, c, name, kind, nil)
}

// readAs is read for a caller that itself listens on the channels in self
// (a watch): its own subscriptions are not counted among the listeners,
// nor taken for a waiter's.
func readAs(ctx context.Context, c *conn, name, kind string, self selfListens) (*State, error) {
	sts, errs := readMany(ctx, c, []request{{name, kind}}, self)
	return sts[0], errs[0]
}

func newState(name, kind string) *State {
	return &State{Name: name, Kind: kind, Holders: []Holder{}, Queue: []Waiter{}, Leases: []Permit{},
		Expired: []Permit{}, Grants: []Waiter{}}
}

// readStep is the first step of reading st: the kind's detection unless
// kind says it, then the kind's own keys, the listeners, the processes.
func readStep(c *conn, st *State, kind string) step {
	body := func() step {
		var s step
		switch st.Kind {
		case kindMutex, kindFairLock, kindEitherLock:
			s = lockStep(c, st)
		case kindRWLock:
			s = rwStep(c, st)
		case kindSemaphore, kindPermits, kindLatch, kindCounter:
			s = counterStep(c, st)
		case kindOther:
			st.Note = "not a synchronizer's layout"
		case kindNone:
			st.Note = "nothing here"
		}
		return then(s, listenStep(c, st))
	}
	return detectStep(c, st, kind, body)
}

// then returns the step that runs a to its end, then b; a nil a is b.
func then(a, b step) step {
	if a == nil {
		return b
	}
	return func(r *round) func() (step, error) {
		after := a(r)
		return func() (step, error) {
			next, err := after()
			if err != nil {
				return nil, err
			}
			return then(next, b), nil
		}
	}
}
