package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/process"
	"github.com/redis/go-redis/v9"
)

// A Process is the process behind a latchkey owner id, as it records
// itself (see the latchkey package documentation, Process record): in
// JSON, host, pid, program, started (RFC 3339) and version (omitted when
// the build did not say). Redisson's owners have none.
type Process process.Record

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
// owner ids among owners, by process UUID, read in one round trip: a
// pipeline of GETs, since the records of several processes lie in
// several cluster slots, which MGET cannot span. An owner of Redisson's
// shape, a process whose record lapsed or was never written (its client
// turned it off, or its ACL refused it) and a record that is not a
// record yield nothing. The error is only that of the round trip itself
// (the server could not be reached), which the records are not worth
// failing for: a caller shows the owners without their processes.
func processes(ctx context.Context, c *conn, owners []string) (map[string]Process, error) {
	cmds := map[string]*redis.StringCmd{}
	pipe := c.client.Pipeline()
	for _, id := range owners {
		if u, ok := processUUID(id); ok && cmds[u] == nil {
			cmds[u] = pipe.Get(ctx, keys.ProcessRecord(u))
		}
	}
	found := map[string]Process{}
	if len(cmds) == 0 {
		return found, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !replyErrors(cmds) {
		return found, err
	}
	for u, cmd := range cmds {
		var p Process
		if raw, err := cmd.Bytes(); err == nil && json.Unmarshal(raw, &p) == nil && p.PID > 0 {
			found[u] = p
		}
	}
	return found, nil
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

// identify fills in the process behind each latchkey holder and waiter
// of st. A server that cannot be reached for the records leaves them out:
// the owners still show.
func identify(ctx context.Context, c *conn, st *State) {
	var ids []string
	for _, h := range st.Holders {
		ids = append(ids, h.Owner)
	}
	for _, w := range st.Queue {
		ids = append(ids, w.Owner)
	}
	found, _ := processes(ctx, c, ids)
	if len(found) == 0 {
		return
	}
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
}
