package lockcore

import (
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// MutexOps is mutex_ops.lua: a mutex's operations on a Redisson RLock hash
// and on the waiter queue beside it. A RedLock's queue node runs it too.
var MutexOps = scripts.Get("mutex_ops")

// The operations of mutex_ops.lua.
const (
	OpAcquire = "acquire" // try, and join the waiter queue if not acquired
	OpTry     = "try"     // try once, leaving no trace
	OpRelease = "release"
	OpDequeue = "dequeue"
	OpForce   = "force"
)

// MutexKeys returns mutex_ops's KEYS for the lock called name.
func MutexKeys(name string) []string {
	l := keys.LockOf(name)
	return []string{l.Name, l.Token, l.Queue, l.Deadlines, l.Channel, l.Hubs, l.Grant}
}

// A MutexCall is one request of mutex_ops.lua (its header says what each
// argument means).
type MutexCall struct {
	Op      string
	Owner   string // the owner id
	Entry   string // the waiter's queue entry, <hub id>/<letter key>
	Reentry string // see Waiter.Reentry
	Queued  bool   // an earlier attempt of the call may have queued it
	Lease   time.Duration
	Now     time.Time
	Pub     string        // PUBLISH or SPUBLISH
	Req     string        // the request record, or ""
	Sync    time.Duration // how long to wait for replicas (see scripts.Write)
}

// Write returns c as a request on client, to the lock whose mutex_ops KEYS
// are ks.
func (c MutexCall) Write(client redis.UniversalClient, ks []string) scripts.Write {
	queued := "0"
	if c.Queued {
		queued = "1"
	}
	return scripts.Write{
		Keys: ks,
		Args: []any{c.Op, c.Owner, c.Entry, scripts.Ms(c.Lease), c.Reentry, c.Now.UnixMilli(),
			scripts.Ms(handoff.QueueTimeout), c.Pub, scripts.Ms(handoff.Grace), handoff.Counted(client, c.Pub), queued},
		Once: c.Req,
		Sync: c.Sync,
	}
}
