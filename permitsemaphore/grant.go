package permitsemaphore

import (
	"context"
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

// abandon undoes what the Acquire call with request w, queue entry entry
// ("" for a single attempt) and n permits from first left behind when it gave up:
// its queue entry, and permits granted to it meanwhile, given back. When
// an attempt went unanswered (unsure) it may have taken the permits: that
// is resolved first, in the background (see resolve), so that a copy of it
// still on its way cannot take them after the queue entry is gone.
func (s *Semaphore) abandon(ctx context.Context, w rt.Call, pub, entry, first string, n int, unsure bool) {
	if !unsure {
		s.dequeue(ctx, pub, entry)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), rt.RecordTTL(s.client))
		defer cancel()
		s.resolve(ctx, w, first, n)
		s.dequeue(ctx, pub, entry)
	}()
}

// resolve finds out whether the acquisition w of the n permits from first,
// given up on without an answer, took them, and releases them if it did; if it did
// not, it makes sure a late copy of it does not. It has until the request
// record expires. The permits' ids make the give-back happen once: a
// dequeue finds none of them held after this release, and this release
// finds none after a dequeue gave them back.
func (s *Semaphore) resolve(ctx context.Context, w rt.Call, first string, n int) {
	rep, applied, err := w.Resolve(ctx, s.client)
	if vs, _ := scripts.Ints(rep.Cmd); err == nil && applied && len(vs) > 0 && vs[0] == 1 {
		_, _ = s.release(ctx, false, permitIDs(first, n)...)
	}
}

// dequeue takes the queue entry of a call that gave up out of the queue,
// giving back permits granted to it meanwhile. A single attempt (entry
// "") left none.
func (s *Semaphore) dequeue(ctx context.Context, pub, entry string) {
	if entry != "" {
		_ = s.write(opDequeue, pub, entry, "", "").Exec(ctx, s.client).Err()
	}
}

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
