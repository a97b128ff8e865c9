package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/mutex"
)

// leaseFlag registers -lease on fs: the watchdog lease that holders are
// taken to renew, against which a hold's TTL tells how long ago it was
// renewed.
func leaseFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("lease", mutex.DefaultWatchdogTimeout, "the watchdog `LEASE` the holders renew (latchkey's and Redisson's default): "+
		"a hold's TTL against it tells when it was last renewed")
}

// holdLiveness fills in how long ago each holder of st renewed its hold,
// as its TTL tells against lease: a watchdog sets the TTL back to the
// lease every third of it, so lease - TTL is the time since. A TTL over
// the lease (a fixed lease, or a longer watchdog's) or none tells nothing,
// nor does a grant not taken yet, whose lease is the grace.
func holdLiveness(st *State, lease time.Duration) {
	for i := range st.Holders {
		h := &st.Holders[i]
		if h.TTLms == nil || *h.TTLms <= 0 || h.Owner == st.Granted {
			continue
		}
		left := time.Duration(*h.TTLms) * time.Millisecond
		if left > lease {
			continue
		}
		ago := (lease - left).Milliseconds()
		h.RenewedMs = &ago
		h.RunningDown = lease-left > stallLimit(lease)
	}
}

// stallLimit is how long a hold on a watchdog lease may go without a
// renewal before it is said to run down: a third of the lease, when the
// watchdog renews, plus a sixth of it or at least renewSlack.
func stallLimit(lease time.Duration) time.Duration { return lease/3 + max(lease/6, renewSlack) }

// holderLiveness says how a holder's hold and process are doing: when its
// hold was renewed, or that it runs down, and for a latchkey holder
// whether its process still writes its record.
func holderLiveness(st *State, h Holder, lease time.Duration) string {
	var s string
	ttl := int64(0)
	if h.TTLms != nil {
		ttl = *h.TTLms
	}
	switch {
	case h.Owner == st.Granted:
		s = "granted by a release, not taken yet"
	case ttl == -1:
		s = "no TTL: held until unlocked"
	case h.RunningDown:
		s = fmt.Sprintf("not renewed for %s (on a %s lease), expires in %s", rounded(*h.RenewedMs), lease, rounded(ttl))
	case h.RenewedMs != nil:
		s = fmt.Sprintf("renewed %s ago", rounded(*h.RenewedMs))
	case ttl > 0:
		s = fmt.Sprintf("TTL over the %s lease (-lease): a fixed lease or a longer watchdog", lease)
	default:
		s = "-"
	}
	if h.Client == "latchkey" {
		s += "; " + recordLiveness(h.Process)
	}
	return s
}

// recordLiveness says whether the process behind a latchkey owner still
// writes its record.
func recordLiveness(p *Process) string {
	switch {
	case p == nil:
		return fmt.Sprintf("no process record (it lapses %s after its process stopped, or was turned off)", keys.ProcessTTL)
	case p.Fresh():
		return fmt.Sprintf("process record written %s ago", rounded(max(p.AgeMs, 1)))
	}
	return fmt.Sprintf("process silent: record written %s ago, every %s while it runs", rounded(p.AgeMs), keys.ProcessRefresh)
}
