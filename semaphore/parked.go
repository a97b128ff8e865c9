package semaphore

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/wait"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
)

// Permits granted to a waiter that never takes them are off the count
// until their grace is over and a call gives them back (restock). So that
// they are never parked, the client whose call granted them runs that
// call once their grace is over, and the client of a waiter that gave up
// hands back what it may hold; Close does both at once (see rt.Book).

// giveUp registers the hand-back of the Acquire call with request w, queue
// entry entry ("" for a single attempt) and n permits: its queue entry,
// and permits granted to it meanwhile; when an attempt went unanswered,
// what it may have taken first (see settle), so that a copy of it still on
// its way cannot take them after the queue entry is gone.
func (s *Semaphore) giveUp(w rt.Call, entry, pub string, n int64) *rt.GiveUp {
	return rt.Of(s.client).Parked().Waiting(s.cfg.Hub == nil,
		func(ctx context.Context) error { return s.settle(ctx, w, n) },
		func(ctx context.Context) error { return s.dequeue(ctx, entry, pub) })
}

// settle finds out whether the acquisition w of n permits, given up on
// without an answer, took them (a grant taken, or permits found free), and
// gives them back if it did; if it did not, it makes sure a late copy of
// it does not. It has until the request record expires: past that, what a
// request took that could not be reached all along is lost, as a crashed
// holder's permits are. The record makes the give-back happen once: the
// dequeue that follows finds no grant of a taken one.
func (s *Semaphore) settle(ctx context.Context, w rt.Call, n int64) error {
	rep, applied, err := w.Resolve(ctx, s.client)
	if err != nil {
		return err
	}
	if vs, _ := scripts.Ints(rep.Cmd); applied && len(vs) > 0 && vs[0] == 1 {
		_ = s.release(ctx, n) // once: sent again, it might count twice
	}
	return nil
}

// dequeue takes the queue entry of a call that gave up out of the queue,
// giving back permits granted to it and not taken. A single attempt
// (entry "") left none.
func (s *Semaphore) dequeue(ctx context.Context, entry, pub string) error {
	if entry == "" {
		return nil
	}
	_, err := s.answer(s.write(opDequeue, entry, 0, pub, "").Exec(ctx, s.client), pub)
	return err
}

// answer decodes the reply {v, handed} of a script that may grant permits
// to waiters, and returns v; a grant made, its purge is due after the
// grace.
func (s *Semaphore) answer(rep rt.Reply, pub string) (int64, error) {
	v, handed, err := wait.Handed(rep.Cmd)
	if handed {
		s.granted(pub)
	}
	return v, err
}

// granted notes that a call of this client granted permits: the purge
// (restock) runs once their grace is over.
func (s *Semaphore) granted(pub string) {
	rt.Of(s.client).Parked().Granted("semaphore:"+s.name, handoff.Grace, func(ctx context.Context) (bool, error) {
		return s.restock(ctx, pub)
	})
}

// restock gives back to the count the permits of grants whose grace is
// over, and hands them to the waiters at the head of the queue. It reports
// whether it granted some anew.
func (s *Semaphore) restock(ctx context.Context, pub string) (bool, error) {
	c := s.write(opRestock, "", 0, pub, "")
	c.Args[0] = time.Now().UnixMilli() // ARGV[1] now
	vs, err := scripts.Ints(c.Exec(ctx, s.client).Cmd)
	return err == nil && len(vs) > 1 && vs[1] == 1, err
}
