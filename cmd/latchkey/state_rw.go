package main

import (
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// maxTimeouts bounds how many of a reader's per-hold timeout keys are read.
const maxTimeouts = 32

// rwStep reads a read-write lock: its hash, TTL, waiting writers and
// fencing counter, then each read hold's own lease.
func rwStep(c *conn, st *State) step {
	return func(r *round) func() (step, error) {
		n := namesOf(st.Name)
		ctx, p := r.ctx, r.p
		hash := p.HGetAll(ctx, st.Name)
		pttl := p.PTTL(ctx, st.Name)
		writers := p.ZRangeWithScores(ctx, n.rw.Writers, 0, -1)
		token := p.Get(ctx, n.rw.Token)
		now := p.Time(ctx)
		return func() (step, error) {
			if err := failed(c, st.Name, hash, pttl, writers, token, now); err != nil {
				return nil, err
			}
			st.TTLms = ttl(pttl)
			fields := hash.Val()
			st.Mode = fields["mode"]
			delete(fields, "mode")
			for f, v := range fields {
				cnt, _ := strconv.ParseInt(v, 10, 64)
				h := Holder{Owner: f, Count: cnt, Mode: "read"}
				if o, ok := strings.CutSuffix(f, ":write"); ok {
					h.Owner, h.Mode, h.TTLms = o, "write", &st.TTLms
				}
				h.Client = client(h.Owner)
				if t, err := token.Int64(); err == nil && h.Mode == "write" && h.Client == "latchkey" {
					st.Token, h.Token = &t, &t
				}
				st.Holders = append(st.Holders, h)
			}
			server := now.Val().UnixMilli()
			for _, z := range writers.Val() { // latchkey writers waiting, deadlines on the server's clock
				w := Waiter{Owner: z.Member.(string), Client: "latchkey", Mode: "write", DeadlineMs: int64(z.Score)}
				w.InMs = w.DeadlineMs - server
				st.Queue = append(st.Queue, w)
			}
			return readLeases(c, st, n, fields), nil
		}
	}
}

// readLeases is the step that reads the lease of each read hold: hold i of
// an owner has its own, on {N}:<owner>:rwlock_timeout:i. A reader's TTL is
// its longest.
func readLeases(c *conn, st *State, n names, fields map[string]string) step {
	return func(r *round) func() (step, error) {
		leases := map[string][]*redis.DurationCmd{}
		for f, v := range fields {
			cnt, _ := strconv.ParseInt(v, 10, 64)
			if strings.HasSuffix(f, ":write") {
				continue
			}
			for i := int64(1); i <= min(cnt, maxTimeouts); i++ {
				leases[f] = append(leases[f], r.p.PTTL(r.ctx, n.readTimeout(f, i)))
			}
		}
		return func() (step, error) {
			for i := range st.Holders {
				h := &st.Holders[i]
				if h.Mode != "read" {
					continue
				}
				var longest int64
				for _, cmd := range leases[h.Owner] {
					if err := failed(c, st.Name, cmd); err != nil {
						return nil, err
					}
					longest = max(longest, ttl(cmd))
				}
				h.TTLms = &longest
			}
			return nil, nil
		}
	}
}

// readTimeout is the key of read hold i of owner field f.
func (n names) readTimeout(f string, i int64) string {
	return n.rw.ReadTimeouts(f) + ":" + strconv.FormatInt(i, 10)
}
