package wait

import (
	"math/rand/v2"
	"time"
)

// A polling waiter (see latchkey.SetPolling) has no messages: it looks
// again on a schedule of its own, within the bounds its attempts give (the
// holder's TTL). A release hands a lock or permits to the head of the
// queue, which only learns it is the head, and has them, by looking: so
// the waiter r places behind the head looks again after (r+1) times
// pollMin, soon enough to follow a queue that moves at every look, and
// backs off, doubling, while its place stays the same (a long hold), to
// pollHead at the head and pollBehind behind it. Both stay well inside
// the grace a release gives a grant (handoff.Grace, 1s), so that a grant
// made to a waiter that did not know yet that it headed the queue is taken
// before it runs out. Each sleep is jittered by a quarter either way, so
// that waiters do not look in step.
const (
	pollMin    = 10 * time.Millisecond
	pollHead   = 200 * time.Millisecond
	pollBehind = 500 * time.Millisecond
)

// A poller schedules one polling wait's looks.
type poller struct {
	rank int64 // the waiter's place at its latest look
	n    int   // looks since its place changed
}

// next returns how long to sleep before the next look by a waiter with
// rank waiters ahead of it (0, or negative for a waiter without a queue:
// none).
func (p *poller) next(rank int64) time.Duration {
	rank = max(rank, 0)
	if rank != p.rank {
		p.rank, p.n = rank, 0
	}
	top := pollHead
	if rank > 0 {
		top = pollBehind
	}
	d := top
	if p.n < 16 {
		d = min(pollMin*time.Duration(rank+1)<<p.n, top)
	}
	if d < top {
		p.n++
	}
	return jitter(d)
}

// jitter returns d give or take a quarter, at random.
func jitter(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2+1)
}
