package chaos

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/countdownlatch"
)

// TestT15LatchSemantics: 10 waiters, each through its own proxy, wait on a
// latch of count 5 that 5 other clients count down. At the final
// count-down every pub/sub connection is killed (CLIENT KILL TYPE pubsub),
// and in every other round the reply to one count-down is lost, so that
// go-redis sends it again. No wait may return before the fifth count-down
// was called, every waiter must return within its bound after the fifth
// count-down returned, the latch must end at zero, and the history must be
// linearizable with the latch model. 6 rounds.
func TestT15LatchSemantics(t *testing.T) {
	const count, waiters, rounds = 5, 10, 6
	bound := backstop + time.Second
	e := newStandalone(t, waiters+count)
	r := newReport(t)
	h := newHistory()
	for round := range rounds {
		nm := name(t, round)
		call := h.Now()
		ok, err := countdownlatch.New(e.Admin, nm).TrySetCount(t.Context(), count)
		h.Add(Op{Client: waiters + count, Name: nm, Kind: SetCount, Outcome: outcome(ok, err), N: count, Call: call, Return: h.Now()})
		if !ok || err != nil {
			t.Fatalf("TrySetCount: %v, %v", ok, err)
		}
		returned := make([]int64, waiters)
		var wg sync.WaitGroup
		for i := range waiters {
			l := countdownlatch.New(e.Clients[i], nm)
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 4*bound)
				defer cancel()
				call := h.Now()
				err := l.Wait(ctx)
				returned[i] = h.Now()
				h.Add(Op{Client: i, Name: nm, Kind: Await, Outcome: outcome(err == nil, err), Call: call, Return: returned[i]})
				if err == nil {
					r.Acquired(1)
				}
			})
		}
		time.Sleep(200 * time.Millisecond) // the waiters subscribe
		var lastCall, lastReturn int64
		for j := range count {
			c := waiters + j
			l := countdownlatch.New(e.Clients[c], nm)
			heal := func() {}
			if j == 2 && round%2 == 1 {
				heal = e.Proxies[c].LoseReplies(1)
				r.Fault()
			}
			if j == count-1 {
				go func() { _ = e.Admin.Do(t.Context(), "CLIENT", "KILL", "TYPE", "pubsub").Err() }()
				r.Fault()
			}
			call := h.Now()
			err := l.CountDown(t.Context())
			ret := h.Now()
			heal()
			h.Add(Op{Client: c, Name: nm, Kind: CountDown, Outcome: outcome(err == nil, err), Call: call, Return: ret})
			lastCall, lastReturn = call, ret
			time.Sleep(20 * time.Millisecond)
		}
		wg.Wait()
		for i, at := range returned {
			switch {
			case at < lastCall:
				r.Violation("%s: waiter %d returned %v before the fifth count-down was called: the latch opened early",
					nm, i, time.Duration(lastCall-at))
			case at-lastReturn > int64(bound):
				r.Violation("%s: waiter %d returned %v after the latch opened, bound %v", nm, i, time.Duration(at-lastReturn), bound)
			}
		}
		if n, err := countdownlatch.New(e.Admin, nm).Count(t.Context()); err != nil || n != 0 {
			r.Violation("%s: count %d (%v) after %d count-downs, want 0", nm, n, err, count)
		}
	}
	checkLinearizable(t, r, t.Name(), latchModel, h.Ops(), 30*time.Second)
}

// outcome classifies a call that reports ok and err.
func outcome(ok bool, err error) Outcome {
	switch {
	case err != nil:
		return Unknown
	case ok:
		return OK
	}
	return Refused
}
