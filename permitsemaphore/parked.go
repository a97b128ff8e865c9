package permitsemaphore

import (
	"context"

	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/wait"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
)

// Permits granted to a waiter that never takes them are held, with a
// lease of the grace, until a call finds that lease over and gives them
// back. So that they are never parked, the client whose call granted them
// makes such a call once their grace is over, and the client of a waiter
// that gave up hands back what it may hold; Close does both at once (see
// rt.Book).

// giveUp registers the hand-back of the Acquire call with request w, queue
// entry entry ("" for a single attempt) and n permits from first: its
// queue entry, and permits granted to it meanwhile; when an attempt went
// unanswered, what it may have taken first (see settle), so that a copy
// of it still on its way cannot take them after the queue entry is gone.
func (s *Semaphore) giveUp(w rt.Call, pub, entry, first string, n int) *rt.GiveUp {
	return rt.Of(s.client).Parked().Waiting(s.cfg.Hub == nil,
		func(ctx context.Context) error { return s.settle(ctx, w, first, n) },
		func(ctx context.Context) error { return s.dequeue(ctx, pub, entry) })
}

// settle finds out whether the acquisition w of the n permits from first,
// given up on without an answer, took them, and releases them if it did;
// if it did not, it makes sure a late copy of it does not. It has until
// the request record expires. The permits' ids make the give-back happen
// once: a dequeue finds none of them held after this release, and this
// release finds none after a dequeue gave them back.
func (s *Semaphore) settle(ctx context.Context, w rt.Call, first string, n int) error {
	rep, applied, err := w.Resolve(ctx, s.client)
	if err != nil {
		return err
	}
	if vs, _ := scripts.Ints(rep.Cmd); applied && len(vs) > 0 && vs[0] == 1 {
		_, _ = s.release(ctx, false, permitIDs(first, n)...)
	}
	return nil
}

// dequeue takes the queue entry of a call that gave up out of the queue,
// giving back permits granted to it meanwhile. A single attempt (entry
// "") left none.
func (s *Semaphore) dequeue(ctx context.Context, pub, entry string) error {
	if entry == "" {
		return nil
	}
	_, err := s.handed(s.write(opDequeue, pub, entry, "", "").Exec(ctx, s.client))
	return err
}

// handed decodes the reply of a script that may grant permits to waiters,
// {v, ..., handed}, and returns v; a grant made, its purge is due after
// the grace.
func (s *Semaphore) handed(rep rt.Reply) (int64, error) {
	v, handed, err := wait.Handed(rep.Cmd)
	if handed {
		s.granted()
	}
	return v, err
}

// granted notes that a call of this client granted permits: once their
// grace is over, it counts the permits, which gives back those whose
// lease ended, the grants not taken among them.
func (s *Semaphore) granted() {
	rt.Of(s.client).Parked().Granted("permitsemaphore:"+s.name, handoff.Grace, func(ctx context.Context) (bool, error) {
		_, err := s.count(ctx)
		return false, err
	})
}
