package main

import "time"

// renewSlack is the least delay past a watchdog's renewal time that a
// hold is allowed before watch says it is not renewed: a renewal is a
// round trip, sent by a process that may be busy.
const renewSlack = time.Second

// A renewals follows the TTL of one hold across looks, to tell a hold
// that nobody renews. A watchdog (latchkey's or Redisson's) sets the TTL
// back to the lease every third of it, so a renewed hold's TTL never
// drops much below two thirds of the lease. The lease is estimated by the
// largest TTL seen for the hold, which for a hold first seen late in its
// life is too small: the estimate only delays the finding, it never makes
// a renewed hold look unrenewed.
type renewals struct {
	hold   string // whose hold (holdersCell), "" when none is followed
	lease  int64  // the largest TTL seen for it, ms
	last   int64  // the TTL at the latest look, ms
	warned bool   // said since the latest renewal seen
}

// observe takes the state of a look. It reports, once per hold (again
// after a renewal), a hold that has gone without renewal longer than a
// watchdog allows: for how long, and how soon it expires. check is how
// soon to look again to find that out, 0 if no look is needed for it.
func (r *renewals) observe(st *State) (notRenewed, expiresIn time.Duration, warn bool, check time.Duration) {
	if len(st.Holders) == 0 || st.TTLms <= 0 {
		*r = renewals{}
		return 0, 0, false, 0
	}
	ttl := st.TTLms
	if hold := holdersCell(st.Holders); hold != r.hold {
		*r = renewals{hold: hold}
	}
	if ttl > r.last {
		r.warned = false // renewed, or first seen
	}
	r.last = ttl
	r.lease = max(r.lease, ttl)
	stale := time.Duration(r.lease-ttl) * time.Millisecond
	lease := time.Duration(r.lease) * time.Millisecond
	limit := lease/3 + max(lease/6, renewSlack)
	if limit >= lease || r.warned {
		return 0, 0, false, 0 // it expires before any finding
	}
	if stale > limit {
		r.warned = true
		return stale, time.Duration(ttl) * time.Millisecond, true, 0
	}
	return 0, 0, false, limit - stale + 10*time.Millisecond
}
