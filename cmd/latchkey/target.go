package main

import (
	"context"
	"strings"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/redis/go-redis/v9"
)

// dial opens the connection and refuses a node of a Redis Cluster reached
// without -cluster: it holds only its own slots' keys, so a listing would
// be partial and a read of another slot's key a bare MOVED.
func (e *env) dial(ctx context.Context) (*conn, error) {
	c, err := e.conn.open()
	if err != nil {
		return nil, err
	}
	// The CLI holds nothing for long: its repairs' writes leave no record
	// of it among the services' processes.
	latchkey.SetProcessRecord(c.client, false)
	if err := c.guard(ctx, e); err != nil {
		c.client.Close()
		return nil, err
	}
	return c, nil
}

// guard returns a usage error if c is a single-server client whose server
// is a cluster node. A server that does not answer INFO (renamed, or
// denied by an ACL) passes: the command's own calls will tell.
func (c *conn) guard(ctx context.Context, e *env) error {
	cl, ok := c.client.(*redis.Client)
	if !ok {
		return nil
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	info, err := cl.Info(ctx, "cluster").Result()
	if err == nil && strings.Contains(info, "cluster_enabled:1") {
		return usagef("%s is a node of a Redis Cluster, which holds only some of the keys: pass -cluster", c.server)
	}
	return nil
}

// A target is the synchronizer a command that changes one acts on: the
// connection, and the state read before the change.
type target struct {
	c  *conn
	st *State
}

// close closes the connection and the shared Hub that the library's
// publishing calls looked up on it.
func (t *target) close() {
	_ = latchkey.Close(t.c.client)
	t.c.client.Close()
}

// open makes the checks every changing command makes (the name is usable,
// a cluster node is reached with -cluster) and reads name's state as kind
// ("" to detect; a plain integer with waiters queued is read as the kind
// of its queue), within the -timeout; the change gets a -timeout of its
// own, after the prompt. A name with nothing under it is the nothing-here
// status. The caller closes the target.
func (e *env) open(ctx context.Context, name, kind string) (*target, error) {
	c, err := e.dial(ctx)
	if err != nil {
		return nil, err
	}
	t := &target{c: c}
	if err := rt.Usable(ctx, name, c.client); err != nil {
		t.close()
		return nil, usagef("%v", err) // a name the library refuses on a cluster
	}
	rctx, cancel := e.withTimeout(ctx)
	defer cancel()
	if t.st, err = read(rctx, c, name, kind); err != nil {
		t.close()
		return nil, err
	}
	if k := counterKind(t.st); k != t.st.Kind {
		if t.st, err = read(rctx, c, name, k); err != nil {
			t.close()
			return nil, err
		}
	}
	if t.st.Kind == kindNone {
		t.close()
		return nil, nothingHere("%s: nothing here on %s", name, c.server)
	}
	return t, nil
}

// counterKind returns the kind of a plain integer where its queue tells
// (else st.Kind): a latch has none, and readCounter parsed a permit
// semaphore's entries as a semaphore's, which tell their kind apart by
// their key (see entriesKind).
func counterKind(st *State) string {
	if st.Kind != kindCounter || len(st.Queue) == 0 {
		return st.Kind
	}
	for _, w := range st.Queue {
		if old, ok := keys.ParseEntry(w.Owner, false); ok && permitIDs(old.Key) || len(w.Owner) == 32 && permitIDs(w.Owner) {
			return kindPermits
		}
	}
	return kindSemaphore
}
