package permitsemaphore

import (
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
)

// The permit semaphore's scripts that change it, one per operation
// (scripts/fragment/pes.lua says how they share the permits and the
// waiter queue).
var (
	acquireScript = scripts.Get("pes_acquire") // acquire and try
	releaseScript = scripts.Get("pes_release")
	dequeueScript = scripts.Get("pes_dequeue")
	setScript     = scripts.Get("pes_set") // add, set and tryset
)

// The operations of the permit semaphore's scripts.
const (
	opAcquire = "acquire" // try (taking a grant), and join the waiter queue if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opAdd     = "add"
	opSet     = "set"
	opTrySet  = "tryset"
	opDelete  = "delete"
)

// write is the request of the permit semaphore's operation op with the
// value arg, on the permits raw, for the queue entry entry ("" but for
// acquire and dequeue), recorded against req unless that is "", with the
// script of op. It panics on an unknown op.
func (s *Semaphore) write(op, pub, entry string, arg any, req string, raw ...any) rt.Call {
	w := rt.Write{Keys: s.keys, Once: req, Sync: s.cfg.Sync.Timeout()}
	args := func(own ...any) []any {
		return handoff.ScriptArgs(s.client, time.Now(), pub, handoff.QueueTimeout, own...)
	}
	switch op {
	case opAcquire, opTry:
		// ARGV[10], whether the waiter listens yet, is set per attempt.
		w.Args = args(append([]any{entry, arg, handoff.Flag(op == opTry), s.ear(), "0"}, raw...)...)
		return rt.Call{Script: acquireScript, Write: w}
	case opRelease:
		w.Args = args(append([]any{arg, scripts.Ms(handoff.Yield)}, raw...)...)
		w.Sole = true // a release's record is its own
		return rt.Call{Script: releaseScript, Write: w}
	case opDequeue:
		w.Args = args(entry, s.ear())
		return rt.Call{Script: dequeueScript, Write: w}
	case opAdd, opSet, opTrySet:
		// ARGV[8], tryset's TTL, is the caller's; a change of the count
		// has a record of its own.
		w.Args = args(op, arg, 0)
		w.Sole = true
		return rt.Call{Script: setScript, Write: w}
	case opDelete:
		w.Args = args()
		w.Sole = true // a delete's record is its own
		return rt.Call{Script: deleteScript, Write: w}
	}
	panic("permitsemaphore: unknown operation " + op)
}

// ear is how long, in ms, this client's Hub may listen on Redisson's
// channel after a waiter left (see handoff.Ear).
func (s *Semaphore) ear() int64 { return scripts.Ms(handoff.Ear(s.cfg.HubFor(s.client))) }
