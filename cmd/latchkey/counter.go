package main

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// readCounter reads the integer-string kinds: semaphore, permit semaphore,
// latch, and the ambiguous plain counter (shown as both permits and count).
func readCounter(ctx context.Context, c *conn, st *State) error {
	n := namesOf(st.Name)
	p := c.client.Pipeline()
	val := p.Get(ctx, st.Name)
	pttl := p.PTTL(ctx, st.Name)
	var leases *redis.ZSliceCmd
	var entries *redis.StringSliceCmd
	var scores *redis.ZSliceCmd
	if st.Kind != kindLatch {
		entries = p.LRange(ctx, n.sem.Queue, 0, -1)
		scores = p.ZRangeWithScores(ctx, n.sem.Deadlines, 0, -1)
	}
	if st.Kind == kindPermits {
		leases = p.ZRangeWithScores(ctx, n.sem.Leases, 0, -1)
	}
	var grants *redis.ZSliceCmd
	if st.Kind == kindSemaphore {
		grants = p.ZRangeWithScores(ctx, n.sem.Grants, 0, -1)
	}
	_, _ = p.Exec(ctx)
	cmds := []redis.Cmder{val, pttl}
	if entries != nil {
		cmds = append(cmds, entries, scores)
	}
	if leases != nil {
		cmds = append(cmds, leases)
	}
	if grants != nil {
		cmds = append(cmds, grants)
	}
	if err := failed(c, st.Name, cmds...); err != nil {
		return err
	}
	st.TTLms = ttl(pttl)
	v, _ := strconv.ParseInt(val.Val(), 10, 64)
	now := time.Now().UnixMilli()
	switch st.Kind {
	case kindLatch:
		st.Count = &v
		return nil
	case kindCounter:
		st.Count = &v
		st.Note = "a plain integer: pass -kind semaphore or -kind countdownlatch"
	case kindPermits:
		for _, z := range leases.Val() {
			pm := Permit{ID: hex.EncodeToString([]byte(z.Member.(string))), ExpiresMs: int64(z.Score), TTLms: -1}
			if pm.ExpiresMs >= permanent {
				pm.ExpiresMs = -1
			} else if pm.TTLms = pm.ExpiresMs - now; pm.TTLms <= 0 {
				v++ // expired: back in the pool at the next call, as Redisson reclaims lazily
				continue
			}
			st.Leases = append(st.Leases, pm)
		}
	}
	st.Permits = &v
	deadline := scoreMap(scores.Val())
	for _, e := range entries.Val() {
		st.Queue = append(st.Queue, semWaiter(st.Kind, e, deadline[e], now))
	}
	if grants != nil {
		for _, z := range grants.Val() {
			e := z.Member.(string)
			st.Grants = append(st.Grants, semWaiter(st.Kind, e, int64(z.Score), now))
		}
	}
	return nil
}

// semWaiter reads a semaphore queue entry e whose deadline is deadline.
func semWaiter(kind, e string, deadline, now int64) Waiter {
	w := Waiter{Owner: e, Client: "latchkey", DeadlineMs: deadline, InMs: deadline - now, Permits: 1}
	if e == "redisson" || e == "redisson:turn" { // Redisson's waiters' place in line
		w.Client = "redisson"
		return w
	}
	_, rest, _ := strings.Cut(e, "/")
	if kind == kindPermits { // <hub id>/<permit ids in hex>, the first addressing letters
		w.Owner, w.Permits = rest[:min(32, len(rest))], int64(len(rest)/32)
	} else if ps, key, ok := strings.Cut(rest, "/"); ok { // <hub id>/<permits>/<key>
		w.Owner = key
		w.Permits, _ = strconv.ParseInt(ps, 10, 64)
	}
	return w
}
