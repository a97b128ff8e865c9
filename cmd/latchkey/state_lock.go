package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

func readLock(ctx context.Context, c *conn, st *State) error {
	n := namesOf(st.Name)
	queue, deadlines, counter := n.lock.Queue, n.lock.Deadlines, n.lock.Token
	if st.Kind == kindFairLock {
		queue, deadlines, counter = n.lock.FairQueue, n.lock.FairDeadlines, n.lock.FairToken
	}
	p := c.client.Pipeline()
	hash := p.HGetAll(ctx, st.Name)
	pttl := p.PTTL(ctx, st.Name)
	token := p.Get(ctx, counter)
	entries := p.LRange(ctx, queue, 0, -1)
	scores := p.ZRangeWithScores(ctx, deadlines, 0, -1)
	grant := p.Get(ctx, n.lock.Grant)
	beats := p.ZRangeWithScores(ctx, n.lock.Heartbeats, 0, -1)
	leader := p.HGetAll(ctx, keys.ElectionOf(st.Name).Leader)
	_, _ = p.Exec(ctx)
	if err := failed(c, st.Name, hash, pttl, token, entries, scores, grant, beats, leader); err != nil {
		return err
	}
	if rec := leader.Val(); rec["owner"] != "" && hash.Val()[rec["owner"]] != "" {
		term, _ := strconv.ParseInt(rec["term"], 10, 64)
		st.Leader = &Leader{Owner: rec["owner"], Value: rec["value"], Term: term}
	}
	st.TTLms = ttl(pttl)
	for f, v := range hash.Val() {
		cnt, _ := strconv.ParseInt(v, 10, 64)
		st.Holders = append(st.Holders, Holder{Owner: f, Count: cnt, Client: client(f)})
	}
	if t, err := token.Int64(); err == nil {
		st.Token = &t
	}
	if grant.Val() != "" {
		st.Granted = entryOwner(grant.Val())
	}
	now := time.Now().UnixMilli()
	deadline := scoreMap(scores.Val())
	// A latchkey fair-lock waiter's heartbeat, <hub id>/<owner>[/...] ->
	// until when, is its liveness; its Hub's channel carries its letters.
	beat, hub := map[string]int64{}, map[string]string{}
	for _, z := range beats.Val() {
		m := z.Member.(string)
		h, key, ok := strings.Cut(m, "/")
		if !ok {
			continue
		}
		who, _, _ := strings.Cut(key, "/")
		beat[who], hub[who] = int64(z.Score), h
	}
	for _, e := range entries.Val() {
		w := Waiter{Owner: e, Client: client(e), DeadlineMs: deadline[e]}
		switch {
		case e == redissonEntry || e == redissonTurn: // Redisson's waiters' place in line
			w.Client = "redisson"
		case st.Kind != kindFairLock: // <hub id>/<owner>[/<call id>]
			w.Owner, w.Client = entryOwner(e), "latchkey"
			w.channel = hubChannel(n.lock.Hubs, e)
		case w.Client == "latchkey":
			if b, ok := beat[e]; ok {
				w.DeadlineMs = b
				w.channel = hubChannel(n.lock.Hubs, hub[e]+"/")
			}
		default: // a Redisson fair-lock waiter listens on a channel of its own
			w.channel = n.lock.Channel + ":" + e
		}
		w.InMs = w.DeadlineMs - now
		st.Queue = append(st.Queue, w)
	}
	return nil
}

// Redisson's waiters' place in a latchkey queue (see queue.lua).
const (
	redissonEntry = "redisson"
	redissonTurn  = "redisson:turn"
)

// hubChannel returns the channel of the Hub of the latchkey queue entry
// e, <hub id>/..., under the prefix hubs; "" when the entry names no Hub
// (its client polls).
func hubChannel(hubs, e string) string {
	h, _, ok := strings.Cut(e, "/")
	if !ok || h == "" {
		return ""
	}
	return hubs + ":" + h
}

// entryOwner returns the owner id in a latchkey queue entry
// <hub id>/<owner id>[/<call id>].
func entryOwner(e string) string {
	_, rest, ok := strings.Cut(e, "/")
	if !ok {
		return e
	}
	o, _, _ := strings.Cut(rest, "/")
	return o
}

func scoreMap(zs []redis.Z) map[string]int64 {
	m := make(map[string]int64, len(zs))
	for _, z := range zs {
		m[z.Member.(string)] = int64(z.Score)
	}
	return m
}
