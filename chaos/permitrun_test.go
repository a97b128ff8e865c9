package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latchkey/latchkey"
)

// A PermitWorker is one client's handle on a semaphore.
type PermitWorker struct {
	Client int
	Name   string
	Rand   *rand.Rand
	// Acquire takes n permits and returns how to give them back.
	Acquire func(ctx context.Context, n int64) (release func(context.Context) error, err error)
	// Lease is how long a permit lives unless given back; 0 if forever.
	Lease time.Duration
	// Retry says that a release may be sent again when its outcome is
	// unknown: it names its permits, so a second release cannot give back
	// more than the first took.
	Retry bool
}

// A PermitRun drives workers that take and give back permits, recording
// every call in H and checking every grant against Holders (whose limit is
// the semaphore's).
type PermitRun struct {
	R       *Report
	H       *History
	Holders *Holders
	// Most is the most permits one acquisition asks for; AcquireTimeout
	// bounds one acquisition; Hold bounds the time permits are kept.
	Most                 int64
	AcquireTimeout, Hold time.Duration

	unknownAcquired atomic.Int64 // permits asked for by acquisitions that ended in an error
	unknownReleased atomic.Int64 // permits given back by releases that ended in an error
	timeouts        atomic.Int64
}

// Run cycles until ctx ends.
func (pr *PermitRun) Run(ctx context.Context, w PermitWorker) {
	for ctx.Err() == nil {
		pr.Cycle(ctx, pr.AcquireTimeout, w, 1+w.Rand.Int64N(pr.Most))
	}
}

// Cycle takes n permits within timeout, keeps them a random time up to
// Hold and gives them back. It reports whether it took them.
func (pr *PermitRun) Cycle(ctx context.Context, timeout time.Duration, w PermitWorker, n int64) bool {
	call := pr.H.Now()
	actx, cancel := context.WithTimeout(ctx, timeout)
	release, err := w.Acquire(actx, n)
	cancel()
	ret := pr.H.Now()
	if err != nil {
		pr.H.Add(Op{Client: w.Client, Name: w.Name, Kind: Acquire, Outcome: Unknown, N: n, Call: call, Return: ret})
		pr.unknownAcquired.Add(n)
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			pr.timeouts.Add(1)
		}
		return false
	}
	pr.H.Add(Op{Client: w.Client, Name: w.Name, Kind: Acquire, Outcome: OK, N: n, Call: call, Return: ret})
	pr.R.Acquired(1)
	hd := hold{client: w.Client, n: n}
	if w.Lease > 0 {
		hd.until = call + int64(w.Lease)
	}
	pr.Holders.Begin(w.Name, hd)
	if pr.Hold > 0 {
		time.Sleep(time.Duration(w.Rand.Int64N(int64(pr.Hold))))
	}
	pr.Holders.End(w.Name, w.Client)
	tries := 1
	if w.Retry {
		tries = unlockTries
	}
	for range tries {
		call := pr.H.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		err := release(rctx)
		cancel()
		op := Op{Client: w.Client, Name: w.Name, Kind: Release, Outcome: OK, N: n, Call: call, Return: pr.H.Now()}
		switch {
		case errors.Is(err, latchkey.ErrNotHeld):
			op.Outcome = Refused
		case err != nil:
			op.Outcome = Unknown
		}
		pr.H.Add(op)
		if op.Outcome != Unknown {
			return true
		}
	}
	pr.unknownReleased.Add(n)
	return true
}

// Settle checks that every worker takes and gives back one permit within
// bound once the faults have healed.
func (pr *PermitRun) Settle(ctx context.Context, bound time.Duration, workers []PermitWorker) {
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			start := time.Now()
			if !pr.Cycle(ctx, bound, w, 1) {
				pr.R.Violation("%s: client %d could not take a permit within %v once the faults had healed", w.Name, w.Client, time.Since(start).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
}
