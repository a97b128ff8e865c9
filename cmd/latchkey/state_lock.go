package main

import (
	"strconv"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// lockStep reads a mutex's or a fair lock's hash, TTL, fencing counter,
// queue (the mutex's, or the fair lock's with its heartbeats), grant and
// election record.
func lockStep(c *conn, st *State) step {
	return func(r *round) func() (step, error) {
		n := namesOf(st.Name)
		queue, deadlines, counter := n.lock.Queue, n.lock.Deadlines, n.lock.Token
		if st.Kind == kindFairLock {
			queue, deadlines, counter = n.lock.FairQueue, n.lock.FairDeadlines, n.lock.FairToken
		}
		ctx, p := r.ctx, r.p
		hash := p.HGetAll(ctx, st.Name)
		pttl := p.PTTL(ctx, st.Name)
		token := p.Get(ctx, counter)
		entries := p.LRange(ctx, queue, 0, -1)
		scores := p.ZRangeWithScores(ctx, deadlines, 0, -1)
		grant := p.Get(ctx, n.lock.Grant)
		beats := p.ZRangeWithScores(ctx, n.lock.Heartbeats, 0, -1)
		leader := p.HGetAll(ctx, keys.ElectionOf(st.Name).Leader)
		return func() (step, error) {
			if err := failed(c, st.Name, hash, pttl, token, entries, scores, grant, beats, leader); err != nil {
				return nil, err
			}
			decodeLock(st, n, hash.Val(), ttl(pttl), token, grant.Val(), leader.Val())
			lockQueue(st, n, entries.Val(), scoreMap(scores.Val()), beats.Val())
			return nil, nil
		}
	}
}

// decodeLock fills in st's holders, each with the lock's TTL and, for a
// latchkey holder, its fencing token (the counter, which its acquisition
// drew last: Redisson's RLock draws none, so a Redisson holder's is not
// the counter's), the counter, the grant and the leader.
func decodeLock(st *State, n names, hash map[string]string, pttl int64, token *redis.StringCmd, grant string, leader map[string]string) {
	if leader["owner"] != "" && hash[leader["owner"]] != "" {
		term, _ := strconv.ParseInt(leader["term"], 10, 64)
		st.Leader = &Leader{Owner: leader["owner"], Value: leader["value"], Term: term}
	}
	st.TTLms = pttl
	t, err := token.Int64()
	if err == nil {
		st.Token = &t
	}
	for f, v := range hash {
		cnt, _ := strconv.ParseInt(v, 10, 64)
		h := Holder{Owner: f, Count: cnt, Client: client(f), TTLms: &st.TTLms}
		if err == nil && h.Client == "latchkey" {
			h.Token = &t
		}
		st.Holders = append(st.Holders, h)
	}
	if grant != "" {
		st.Granted = entryOwner(grant)
	}
}

// lockQueue fills in st's waiters from its queue's entries, their
// deadlines and, for a fair lock, latchkey's heartbeats.
func lockQueue(st *State, n names, entries []string, deadline map[string]int64, beats []redis.Z) {
	now := time.Now().UnixMilli()
	// A latchkey fair-lock waiter's heartbeat, <hub id>/<owner>[/...] ->
	// until when, is its liveness; its Hub's channel carries its letters.
	beat, hub := map[string]int64{}, map[string]string{}
	for _, z := range beats {
		if b, ok := keys.ParseEntry(z.Member.(string), false); ok {
			beat[b.Owner()], hub[b.Owner()] = int64(z.Score), b.Hub
		}
	}
	for _, e := range entries {
		w := Waiter{Owner: e, Client: client(e), DeadlineMs: deadline[e]}
		switch {
		case e == redissonEntry || e == redissonTurn: // Redisson's waiters' place in line
			w.Client = "redisson"
		case st.Kind != kindFairLock: // <hub id>/<owner>[/<call id>]
			w.Owner, w.Client = entryOwner(e), "latchkey"
			w.channel = entryChannel(n.lock.Hubs, e)
		case w.Client == "latchkey":
			if b, ok := beat[e]; ok {
				w.DeadlineMs = b
				w.channel = hubChannel(n.lock.Hubs, hub[e])
			}
		default: // a Redisson fair-lock waiter listens on a channel of its own
			w.channel = n.lock.Channel + ":" + e
		}
		w.InMs = w.DeadlineMs - now
		st.Queue = append(st.Queue, w)
	}
}

// Redisson's waiters' place in a latchkey queue (see queue.lua).
const (
	redissonEntry = "redisson"
	redissonTurn  = "redisson:turn"
)

// entryChannel returns the channel of the Hub of the latchkey queue
// entry e, a lock's or a semaphore's (the Hub comes first in both), under
// the prefix hubs; "" when the entry names no Hub (its client polls) or
// is none of latchkey's.
func entryChannel(hubs, e string) string {
	le, ok := keys.ParseEntry(e, false)
	if !ok {
		return ""
	}
	return hubChannel(hubs, le.Hub)
}

// hubChannel returns the channel of Hub hub under the prefix hubs, ""
// for no Hub (a client that polls, whom no letter reaches).
func hubChannel(hubs, hub string) string {
	if hub == "" {
		return ""
	}
	return keys.HubChannel(hubs, hub)
}

// entryOwner returns the owner id in a latchkey lock queue entry (see
// keys.Entry), or e itself when it is none.
func entryOwner(e string) string {
	le, ok := keys.ParseEntry(e, false)
	if !ok {
		return e
	}
	return le.Owner()
}

func scoreMap(zs []redis.Z) map[string]int64 {
	m := make(map[string]int64, len(zs))
	for _, z := range zs {
		m[z.Member.(string)] = int64(z.Score)
	}
	return m
}
