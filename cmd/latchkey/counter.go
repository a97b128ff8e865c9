package main

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// counterStep reads the integer-string kinds: semaphore, permit
// semaphore, latch, and the ambiguous plain counter (shown as both permits
// and count).
func counterStep(c *conn, st *State) step {
	return func(r *round) func() (step, error) {
		n := namesOf(st.Name)
		ctx, p := r.ctx, r.p
		val := p.Get(ctx, st.Name)
		pttl := p.PTTL(ctx, st.Name)
		cmds := []redis.Cmder{val, pttl}
		var entries *redis.StringSliceCmd
		var scores, leases, grants *redis.ZSliceCmd
		if st.Kind != kindLatch {
			entries = p.LRange(ctx, n.sem.Queue, 0, -1)
			scores = p.ZRangeWithScores(ctx, n.sem.Deadlines, 0, -1)
			cmds = append(cmds, entries, scores)
		}
		if st.Kind == kindPermits {
			leases = p.ZRangeWithScores(ctx, n.sem.Leases, 0, -1)
			cmds = append(cmds, leases)
		}
		if st.Kind == kindSemaphore {
			grants = p.ZRangeWithScores(ctx, n.sem.Grants, 0, -1)
			cmds = append(cmds, grants)
		}
		return func() (step, error) {
			if err := failed(c, st.Name, cmds...); err != nil {
				return nil, err
			}
			st.TTLms = ttl(pttl)
			v, _ := strconv.ParseInt(val.Val(), 10, 64)
			now := time.Now().UnixMilli()
			switch st.Kind {
			case kindLatch:
				st.Count = &v
				return nil, nil
			case kindCounter:
				st.Count = &v
			case kindPermits:
				permitTotals(st, v, leases.Val(), now)
			}
			st.Permits = &v
			deadline := scoreMap(scores.Val())
			for _, e := range entries.Val() {
				w := semWaiter(st.Kind, e, deadline[e], now)
				if w.Client == "latchkey" {
					w.channel = entryChannel(n.sem.Hubs, e)
				}
				st.Queue = append(st.Queue, w)
			}
			if grants != nil {
				for _, z := range grants.Val() {
					e := z.Member.(string)
					st.Grants = append(st.Grants, semWaiter(st.Kind, e, int64(z.Score), now))
				}
			}
			return nil, nil
		}
	}
}

// permitTotals sorts a permit semaphore's leases into the permits held
// and those expired, not reclaimed yet (a call gives them back to the
// pool, as Redisson reclaims them, lazily), and counts them beside
// available, the count.
func permitTotals(st *State, available int64, leases []redis.Z, now int64) {
	for _, z := range leases {
		pm := Permit{ID: hex.EncodeToString([]byte(z.Member.(string))), ExpiresMs: int64(z.Score), TTLms: -1}
		switch {
		case pm.ExpiresMs >= permanent:
			pm.ExpiresMs = -1
		case pm.ExpiresMs <= now:
			pm.TTLms = 0
			st.Expired = append(st.Expired, pm)
			continue
		default:
			pm.TTLms = pm.ExpiresMs - now
		}
		st.Leases = append(st.Leases, pm)
	}
	acquired, expired := int64(len(st.Leases)), int64(len(st.Expired))
	total := available + acquired + expired
	st.PermitsAcquired, st.PermitsExpired, st.PermitsTotal = &acquired, &expired, &total
}

// semWaiter reads a semaphore queue entry e whose deadline is deadline,
// with the keys codec (keys.ParseEntry), as the scripts write it; an
// entry it cannot read is shown whole, waiting for one permit.
func semWaiter(kind, e string, deadline, now int64) Waiter {
	w := Waiter{Owner: e, Client: "latchkey", DeadlineMs: deadline, InMs: deadline - now, Permits: 1}
	if e == redissonEntry || e == redissonTurn { // Redisson's waiters' place in line
		w.Client = "redisson"
		return w
	}
	if old, ok := keys.ParseEntry(e, false); ok && kind == kindPermits && permitIDs(old.Key) { // before: <hub id>/<permit ids in hex>
		w.Owner, w.Permits = old.Key[:32], int64(len(old.Key)/32)
	} else if se, ok := keys.ParseEntry(e, true); ok {
		w.Owner, w.Permits = se.Key, se.N
	}
	return w
}
