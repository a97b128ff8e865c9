package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/redis/go-redis/v9"
)

// A Process is the process behind a latchkey owner id, as it records
// itself (see the latchkey package documentation, Process record): in
// JSON, host, pid, program, started (RFC 3339) and version (omitted when
// the build did not say), and age_ms, how long ago the process last wrote
// the record: a running process rewrites it every minute
// (keys.ProcessRefresh), so an older one tells of a process that stopped
// (died, frozen, cut off from Redis) about that long ago, less a minute.
// Redisson's owners have none.
type Process struct {
	keys.Process
	AgeMs int64 `json:"age_ms"`
}

// Fresh reports whether the record was written within a refresh period
// and a margin: its process still writes it.
func (p Process) Fresh() bool {
	return time.Duration(p.AgeMs)*time.Millisecond <= keys.ProcessRefresh+recordSlack
}

// recordSlack is how late a rewrite of a record may be before inspect
// says its process is silent: a write is a round trip, and the writer
// retries a failed one only at the next refresh.
const recordSlack = 15 * time.Second

// String returns the short form the table shows: "web-7 pid 4121
// (orders-svc)", without the parts the record lacks.
func (p Process) String() string {
	s := "pid " + strconv.Itoa(p.PID)
	if p.Host != "" {
		s = p.Host + " " + s
	}
	if p.Program != "" {
		s += " (" + p.Program + ")"
	}
	return s
}

// processUUID returns the process UUID of a latchkey owner id
// (<uuid>:<n>, or a rwlock writer's <uuid>:<n>:write), and false for
// any other: Redisson's, or a name a user gave.
func processUUID(id string) (string, bool) {
	if !owner.Latchkey(id) {
		return "", false
	}
	return id[:36], true
}

// processes returns the records of the processes behind the latchkey
// owner ids among owners, by process UUID, read in one round trip (see
// queueRecords). The error is only that of the round trip itself (the
// server could not be reached), which the records are not worth failing
// for: a caller shows the owners without their processes.
func processes(ctx context.Context, c *conn, owners []string) (map[string]Process, error) {
	pipe := c.client.Pipeline()
	rs := queueRecords(ctx, pipe, owners)
	if len(rs.get) == 0 {
		return map[string]Process{}, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !replyErrors(rs.get) {
		return map[string]Process{}, err
	}
	return rs.decode(), nil
}

// records are the reads of the process records of some owners.
type records struct {
	get map[string]*redis.StringCmd   // by process UUID
	ttl map[string]*redis.DurationCmd // the record's, for its age
}

// queueRecords queues on p a GET and a PTTL of the record of each process
// behind a latchkey owner id among owners: a pipeline, since the records of
// several processes lie in several cluster slots, which MGET cannot span.
func queueRecords(ctx context.Context, p redis.Pipeliner, owners []string) *records {
	rs := &records{get: map[string]*redis.StringCmd{}, ttl: map[string]*redis.DurationCmd{}}
	for _, id := range owners {
		if u, ok := processUUID(id); ok && rs.get[u] == nil {
			rs.get[u] = p.Get(ctx, keys.ProcessRecord(u))
			rs.ttl[u] = p.PTTL(ctx, keys.ProcessRecord(u))
		}
	}
	return rs
}

// decode returns the records found, by process UUID. An owner of
// Redisson's shape, a process whose record lapsed or was never written
// (its client turned it off, or its ACL refused it) and a record that is
// not a record yield nothing.
func (rs *records) decode() map[string]Process {
	found := map[string]Process{}
	for u, cmd := range rs.get {
		var p Process
		if raw, err := cmd.Bytes(); err == nil && json.Unmarshal(raw, &p.Process) == nil && p.PID > 0 {
			if left := rs.ttl[u].Val(); left > 0 {
				p.AgeMs = max(keys.ProcessTTL-left, 0).Milliseconds()
			}
			found[u] = p
		}
	}
	return found
}

// replyErrors reports whether every failed command of cmds failed with
// an answer of the server's (a missing key, WRONGTYPE on a key that is
// not a record), not for want of a server.
func replyErrors(cmds map[string]*redis.StringCmd) bool {
	for _, cmd := range cmds {
		var re redis.Error
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) && !errors.As(err, &re) {
			return false
		}
	}
	return true
}

// identifyStep fills in the process behind each latchkey holder and
// waiter of st. A server that cannot be reached for the records leaves
// them out: the owners still show.
func identifyStep(c *conn, st *State) step {
	return func(r *round) func() (step, error) {
		var ids []string
		for _, h := range st.Holders {
			ids = append(ids, h.Owner)
		}
		for _, w := range st.Queue {
			ids = append(ids, w.Owner)
		}
		rs := queueRecords(r.ctx, r.p, ids)
		return func() (step, error) {
			found := rs.decode()
			of := func(id string) *Process {
				if u, ok := processUUID(id); ok {
					if p, ok := found[u]; ok {
						return &p
					}
				}
				return nil
			}
			for i := range st.Holders {
				st.Holders[i].Process = of(st.Holders[i].Owner)
			}
			for i := range st.Queue {
				st.Queue[i].Process = of(st.Queue[i].Owner)
			}
			holdLiveness(st, c.lease)
			return nil, nil
		}
	}
}
