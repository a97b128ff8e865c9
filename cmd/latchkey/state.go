package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// State is what inspect reports about one name; -json prints it as is.
type State struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// TTLms is the main key's remaining time to live in ms: -1 if it has
	// no TTL, 0 if it does not exist.
	TTLms   int64    `json:"ttl_ms"`
	Mode    string   `json:"mode,omitempty"` // rwlock: read or write
	Holders []Holder `json:"holders"`
	// Token is the fencing counter, which outlives the holds: the token of
	// the latest acquisition by latchkey. A mutex's is
	// redisson_lock_token:{name}, a fair lock's latchkey_lock_token:{name};
	// a read-write lock's, latchkey_rwlock_token:{name}, is shown only
	// while a latchkey writer holds it, whose token it then is (read holds
	// and Redisson's have none).
	Token   *int64   `json:"token"`
	Permits *int64   `json:"permits"`    // semaphores: permits available
	Leases  []Permit `json:"permit_ids"` // permitsemaphore: permits held
	Count   *int64   `json:"count"`      // countdownlatch: the count
	Queue   []Waiter `json:"queue"`
	// Granted is the owner a release granted a mutex or fair lock to, not
	// taken yet; Grants are a semaphore's queue entries granted permits
	// and not taken yet, each until the end of its grace (DeadlineMs).
	// A permit semaphore's grant is a permit among Leases whose lease is
	// the grace.
	Granted string   `json:"granted,omitempty"`
	Grants  []Waiter `json:"grants"`
	// Leader is the election leader's record (package election), for a
	// mutex whose holder campaigned: latchkey_election:{name}.
	Leader *Leader `json:"leader,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// A Leader is the record of the leader of an election on a mutex.
type Leader struct {
	Owner string `json:"owner"`
	Value string `json:"value"`
	Term  int64  `json:"term"` // the fencing token of its hold
}

// A Holder is one owner holding a lock.
type Holder struct {
	Owner  string `json:"owner"`
	Count  int64  `json:"count"`          // holds (reentrancy)
	Mode   string `json:"mode,omitempty"` // rwlock: read or write
	Client string `json:"client"`         // latchkey or redisson (by the owner id's shape)
	TTLms  *int64 `json:"ttl_ms,omitempty"`
}

// A Waiter is one entry of a waiter queue, first in line first.
type Waiter struct {
	Owner   string `json:"owner"`
	Client  string `json:"client"`
	Mode    string `json:"mode,omitempty"`    // rwlock: write
	Permits int64  `json:"permits,omitempty"` // semaphores: permits asked for
	// DeadlineMs is when the entry expires unless its waiter comes back
	// (epoch ms); InMs is how long until then (negative: overdue, left for
	// the next call to purge).
	DeadlineMs int64 `json:"deadline_ms"`
	InMs       int64 `json:"in_ms"`
}

// A Permit is one acquired permit of a permit semaphore.
type Permit struct {
	ID        string `json:"id"`         // 32 hex characters, as Redisson shows it
	ExpiresMs int64  `json:"expires_ms"` // epoch ms, -1 if permanent
	TTLms     int64  `json:"ttl_ms"`     // -1 if permanent
}

// permanent is Redisson's lease end of a permit without a lease.
const permanent = 922337203685477

// read returns the state of name as a synchronizer of kind ("" to detect).
// It only reads: nothing is purged or reclaimed.
func read(ctx context.Context, c *conn, name, kind string) (*State, error) {
	if kind == "" {
		var err error
		if kind, err = detect(ctx, c, name); err != nil {
			return nil, err
		}
	}
	st := &State{Name: name, Kind: kind, Holders: []Holder{}, Queue: []Waiter{}, Leases: []Permit{}, Grants: []Waiter{}}
	var err error
	switch kind {
	case kindMutex, kindFairLock:
		err = readLock(ctx, c, st)
	case kindRWLock:
		err = readRW(ctx, c, st)
	case kindSemaphore, kindPermits, kindLatch, kindCounter:
		err = readCounter(ctx, c, st)
	case kindOther:
		st.Note = "not a synchronizer's layout"
	case kindNone:
		st.Note = "nothing here"
	}
	return st, err
}

// client tells whose owner id this is.
func client(id string) string {
	if owner.Latchkey(id) {
		return "latchkey"
	}
	return "redisson"
}

// ttl turns a PTTL reply into State.TTLms.
func ttl(cmd *redis.DurationCmd) int64 {
	switch d := cmd.Val(); {
	case d == -1:
		return -1
	case d < 0:
		return 0
	default:
		return d.Milliseconds()
	}
}

// failed returns the first error of cmds other than redis.Nil.
func failed(c *conn, key string, cmds ...redis.Cmder) error {
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return c.keyErr(key, err)
		}
	}
	return nil
}

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
	leader := p.HGetAll(ctx, keys.ElectionOf(st.Name).Leader)
	_, _ = p.Exec(ctx)
	if err := failed(c, st.Name, hash, pttl, token, entries, scores, grant, leader); err != nil {
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
	for _, e := range entries.Val() {
		w := Waiter{Owner: e, Client: client(e), DeadlineMs: deadline[e]}
		if st.Kind == kindMutex { // <hub id>/<owner>[/<call id>]
			w.Owner, w.Client = entryOwner(e), "latchkey"
		}
		w.InMs = w.DeadlineMs - now
		st.Queue = append(st.Queue, w)
	}
	return nil
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
