package wait

import (
	"math/rand/v2"
	"time"
)

// A polling waiter (see latchkey.SetPolling) has no messages: it looks
// again on a schedule of its own, within the bounds its attempts give (the
// holder's TTL). The head of a queue, or a waiter that has none, backs off
// from pollMin to pollHead, so that a release is seen soon and a long hold
// costs a few looks a second; the waiters behind it look every pollBehind.
// Both stay well inside the grace a release gives a grant (handoff.Grace,
// 1s), so that a grant made to a waiter that did not know yet that it
// headed the queue is taken before it runs out. Each sleep is jittered by
// a quarter either way, so that waiters do not look in step.
const (
	pollMin    = 10 * time.Millisecond
	pollHead   = 200 * time.Millisecond
	pollBehind = 500 * time.Millisecond
)

// A poller schedules one polling wait's looks.
type poller struct{ n int } // looks at the head since it backed off last

// next returns how long to sleep before the next look by a waiter with
// rank waiters ahead of it (negative or 0: none).
func (p *poller) next(rank int64) time.Duration {
	if rank > 0 {
		p.n = 0
		return jitter(pollBehind)
	}
	d := min(pollMin<<p.n, pollHead)
	if d < pollHead {
		p.n++
	}
	return jitter(d)
}

// jitter returns d give or take a quarter, at random.
func jitter(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2+1)
}
