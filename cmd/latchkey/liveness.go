package main

import (
	"flag"
	"time"

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
