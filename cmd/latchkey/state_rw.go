package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// maxTimeouts bounds how many of a reader's per-hold timeout keys are read.
const maxTimeouts = 32

func readRW(ctx context.Context, c *conn, st *State) error {
	n := namesOf(st.Name)
	p := c.client.Pipeline()
	hash := p.HGetAll(ctx, st.Name)
	pttl := p.PTTL(ctx, st.Name)
	writers := p.ZRangeWithScores(ctx, n.rw.Writers, 0, -1)
	token := p.Get(ctx, n.rw.Token)
	now := p.Time(ctx)
	_, _ = p.Exec(ctx)
	if err := failed(c, st.Name, hash, pttl, writers, token, now); err != nil {
		return err
	}
	st.TTLms = ttl(pttl)
	fields := hash.Val()
	st.Mode = fields["mode"]
	delete(fields, "mode")
	// Each read hold i of an owner has its lease on {N}:<owner>:rwlock_timeout:i.
	p = c.client.Pipeline()
	leases := map[string][]*redis.DurationCmd{}
	for f, v := range fields {
		cnt, _ := strconv.ParseInt(v, 10, 64)
		h := Holder{Owner: f, Count: cnt, Mode: "read"}
		if o, ok := strings.CutSuffix(f, ":write"); ok {
			h.Owner, h.Mode = o, "write"
		} else {
			for i := int64(1); i <= min(cnt, maxTimeouts); i++ {
				leases[f] = append(leases[f], p.PTTL(ctx, n.readTimeout(f, i)))
			}
		}
		h.Client = client(h.Owner)
		st.Holders = append(st.Holders, h)
		if t, err := token.Int64(); err == nil && h.Mode == "write" && h.Client == "latchkey" {
			st.Token = &t
		}
	}
	if len(leases) > 0 {
		_, _ = p.Exec(ctx)
	}
	for i := range st.Holders {
		h := &st.Holders[i]
		if h.Mode != "read" {
			continue
		}
		var longest int64
		for _, cmd := range leases[h.Owner] {
			longest = max(longest, ttl(cmd))
		}
		h.TTLms = &longest
	}
	server := now.Val().UnixMilli()
	for _, z := range writers.Val() { // latchkey writers waiting, deadlines on the server's clock
		w := Waiter{Owner: z.Member.(string), Client: "latchkey", Mode: "write", DeadlineMs: int64(z.Score)}
		w.InMs = w.DeadlineMs - server
		st.Queue = append(st.Queue, w)
	}
	return nil
}

// readTimeout is the key of read hold i of owner field f.
func (n names) readTimeout(f string, i int64) string {
	return keys.Suffix(n.name, f+":rwlock_timeout") + ":" + strconv.FormatInt(i, 10)
}
