package permitsemaphore

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
)

var opsScript = scripts.Get("pes_ops")

// The operations of pes_ops.lua.
const (
	opAcquire = "acquire" // try (taking a grant), and join the waiter queue if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opAdd     = "add"
	opSet     = "set"
	opTrySet  = "tryset"
)

// abandon undoes what the Acquire call with request w, queue entry entry
// ("" for a single attempt) and permits raw left behind when it gave up:
// its queue entry, and permits granted to it meanwhile, given back. When
// an attempt went unanswered (unsure) it may have taken the permits: that
// is resolved first, in the background (see resolve), so that a copy of it
// still on its way cannot take them after the queue entry is gone.
func (s *Semaphore) abandon(ctx context.Context, w scripts.Write, pub, entry string, raw []any, unsure bool) {
	if !unsure {
		s.dequeue(ctx, pub, entry)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), scripts.RecordTTL(s.client))
		defer cancel()
		s.resolve(ctx, w, raw)
		s.dequeue(ctx, pub, entry)
	}()
}

// resolve finds out whether the acquisition w of the permits raw, given up
// on without an answer, took them, and releases them if it did; if it did
// not, it makes sure a late copy of it does not. It has until the request
// record expires. The permits' ids make the give-back happen once: a
// dequeue finds none of them held after this release, and this release
// finds none after a dequeue gave them back.
func (s *Semaphore) resolve(ctx context.Context, w scripts.Write, raw []any) {
	rep, applied, err := opsScript.Resolve(ctx, s.client, w)
	if vs, _ := scripts.Ints(rep.Cmd); err == nil && applied && len(vs) > 0 && vs[0] == 1 {
		_, _ = s.release(ctx, false, raw...)
	}
}

// dequeue takes the queue entry of a call that gave up out of the queue,
// giving back permits granted to it meanwhile. A single attempt (entry
// "") left none.
func (s *Semaphore) dequeue(ctx context.Context, pub, entry string) {
	if entry != "" {
		_ = opsScript.Exec(ctx, s.client, s.write(opDequeue, pub, entry, "", "")).Err()
	}
}

// write is the request of an operation of pes_ops with the value arg, on
// the permits raw, for the queue entry entry, recorded against req unless
// that is "".
func (s *Semaphore) write(op, pub, entry string, arg any, req string, raw ...any) scripts.Write {
	args := append([]any{op, time.Now().UnixMilli(), pub, scripts.Ms(handoff.QueueTimeout), scripts.Ms(handoff.Grace),
		handoff.Counted(s.client, pub), entry, arg}, raw...)
	return scripts.Write{Keys: s.keys, Args: args, Once: req, Sync: s.cfg.Sync.Timeout()}
}
