package main

import "time"

// renewSlack is the least delay past a watchdog's renewal time that a
// hold is allowed before watch says it is not renewed: a renewal is a
// round trip, sent by a process that may be busy.
const renewSlack = time.Second

// A renewals follows the TTL of one hold across looks, to tell a hold
// that nobody renews. A watchdog (latchkey's or Redisson's) sets the TTL
// back to the lease every third of it, so a renewed hold's TTL never
// drops much below two thirds of the lease. The lease is the one -lease
// says (30s, latchkey's and Redisson's default), so that a hold first seen
// late in its life is measured from its last renewal; a TTL seen over it
// tells of a longer lease, which the largest TTL seen then stands for, a
// lower bound: the time without renewal is then at least what it says.
type renewals struct {
	hold   string // whose hold (holdersCell), "" when none is followed
	max    int64  // the largest TTL seen for it, ms
	last   int64  // the TTL at the latest look, ms
	warned bool   // said since the latest renewal seen
}

// observe takes the state of a look and the lease holders are taken to
// renew. It reports, once per hold (again after a renewal), a hold that
// has gone without renewal longer than a watchdog allows: for how long,
// how soon it expires, and the lease it measured against (over assumed:
// the largest TTL seen, and the time a lower bound). check is how soon to
// look again to find that out, 0 if no look is needed for it.
func (r *renewals) observe(st *State, assumed time.Duration) (notRenewed, expiresIn, lease time.Duration, warn bool, check time.Duration) {
	if len(st.Holders) == 0 || st.TTLms <= 0 || st.Granted != "" { // a grant's lease is the grace
		*r = renewals{}
		return 0, 0, 0, false, 0
	}
	ttl := st.TTLms
	if hold := holdersCell(st.Holders); hold != r.hold {
		*r = renewals{hold: hold}
	}
	if ttl > r.last {
		r.warned = false // renewed, or first seen
	}
	r.last = ttl
	r.max = max(r.max, ttl)
	lease = max(time.Duration(r.max)*time.Millisecond, assumed)
	stale := lease - time.Duration(ttl)*time.Millisecond
	limit := stallLimit(lease)
	if limit >= lease || r.warned {
		return 0, 0, lease, false, 0 // it expires before any finding
	}
	if stale > limit {
		r.warned = true
		return stale, time.Duration(ttl) * time.Millisecond, lease, true, 0
	}
	return 0, 0, lease, false, limit - stale + 10*time.Millisecond
}
