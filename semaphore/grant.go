package semaphore

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
)

// The semaphore's scripts, one per operation (scripts/fragment/sem.lua
// says how they share the count and the waiter queue).
var (
	acquireScript = scripts.Get("sem_acquire") // acquire and try
	releaseScript = scripts.Get("sem_release")
	dequeueScript = scripts.Get("sem_dequeue")
	setScript     = scripts.Get("sem_set") // add, set and tryset
	restockScript = scripts.Get("sem_restock")
)

// The operations of the semaphore's scripts.
const (
	opAcquire = "acquire" // try (taking a grant), and join the waiter queue if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opAdd     = "add"
	opSet     = "set"
	opTrySet  = "tryset"
	opDelete  = "delete"
	opRestock = "restock"
)

// write is the request of the semaphore's operation op on n permits for
// the queue entry entry ("" but for acquire and dequeue), recorded against
// req unless that is "", with the script of op. It panics on an unknown op.
func (s *Semaphore) write(op, entry string, n int64, pub, req string) rt.Call {
	w := rt.Write{Keys: s.keys, Once: req, Sync: s.cfg.Sync.Timeout()}
	args := func(own ...any) []any {
		return handoff.ScriptArgs(s.client, time.Now(), pub, handoff.QueueTimeout, own...)
	}
	switch op {
	case opAcquire, opTry:
		// ARGV[10], whether the waiter listens yet, is set per attempt.
		w.Args = args(entry, n, handoff.Flag(op == opTry), s.ear(), "0")
		return rt.Call{Script: acquireScript, Write: w}
	case opRelease:
		w.Args = args(n, scripts.Ms(handoff.Yield))
		w.Sole = true // a release's record is its own
		return rt.Call{Script: releaseScript, Write: w}
	case opDequeue:
		w.Args = args(entry, s.ear())
		return rt.Call{Script: dequeueScript, Write: w}
	case opRestock:
		w.Args = args()
		return rt.Call{Script: restockScript, Write: w}
	case opAdd, opSet, opTrySet:
		// ARGV[8], tryset's TTL, is the caller's; a change of the count
		// has a record of its own.
		w.Args = args(op, n, 0)
		w.Sole = true
		return rt.Call{Script: setScript, Write: w}
	case opDelete:
		w.Args = args()
		w.Sole = true // a delete's record is its own
		return rt.Call{Script: deleteScript, Write: w}
	}
	panic("semaphore: unknown operation " + op)
}

// ear is how long, in ms, this client's Hub may listen on Redisson's
// channel after a waiter left (see handoff.Ear).
func (s *Semaphore) ear() int64 { return scripts.Ms(handoff.Ear(s.cfg.HubFor(s.client))) }

// resend runs w, sending it again through transient faults: a request
// recorded against its Once, or one whose repeat changes nothing, is safe
// to send twice.
func (s *Semaphore) resend(ctx context.Context, w rt.Call) rt.Reply {
	r, _ := w.Resend(ctx, s.client)
	return r
}
