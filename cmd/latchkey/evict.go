package main

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// runEvict removes one waiter, by the owner id that inspect shows, from a
// synchronizer's queue, as if it had given up.
func runEvict(ctx context.Context, e *env, args []string) error {
	ch := newChanging("evict", kindList, "evict [flags] NAME WAITER", evictHelp)
	wt := ch.fs.Duration("wait-timeout", fairlock.DefaultWaitTimeout, "fair lock: Redisson's fairLockWaitTimeout, by which the deadlines behind the waiter move up")
	rest, err := ch.parse(e, args, 2, "NAME and the WAITER to evict")
	if err != nil {
		return err
	}
	name, id := rest[0], rest[1]
	if *wt < time.Millisecond {
		return usagef("-wait-timeout must be at least 1ms")
	}
	if id == "redisson" || id == "redisson:turn" {
		return usagef("%q is the place in line of Redisson's waiters, who do not queue one by one", id)
	}
	t, err := ch.open(ctx, e, name, fmt.Sprintf("evict %q from %q", id, name))
	if err != nil {
		return err
	}
	defer t.close()
	st := t.st
	pos := -1
	for i, w := range st.Queue {
		if w.Owner == id {
			pos = i
			break
		}
	}
	if pos < 0 {
		return nothingHere("%s: no waiter %q in the queue of %s %q", t.c.server, id, st.Kind, name)
	}
	q := fmt.Sprintf("Evict waiter %s (#%d of %d, %s) from %s %q on %s? [y/N] ", id, pos+1, len(st.Queue), deadline(st.Queue[pos]), st.Kind, name, t.c.server)
	if err := approve(e, *ch.yes, q); err != nil {
		return err
	}
	ctx, cancel := e.withTimeout(ctx)
	defer cancel()
	n, err := evict(ctx, t.c, st, id, *wt)
	if err != nil {
		return t.c.keyErr(name, err)
	}
	if n == 0 {
		return nothingHere("%s: waiter %q left the queue of %q meanwhile", t.c.server, id, name)
	}
	fmt.Fprintf(e.stdout, "%s: evicted %s, #%d of %d queued", name, id, pos+1, len(st.Queue))
	if pos == 0 {
		fmt.Fprint(e.stdout, "; the next in line was told")
	}
	fmt.Fprintln(e.stdout)
	return nil
}

// evict runs the dequeue script of st's kind for every queue entry of the
// waiter id, and returns how many it took out. These are the scripts by
// which a waiter that gives up leaves a queue: each takes it out and
// hands on what it held back (the lock of a free mutex or fair lock to the
// next in line, permits to those behind it, readers past a writer that
// no longer waits), waking them on the channels they listen on; evict
// runs them for a waiter that will never give up by itself.
func evict(ctx context.Context, c *conn, st *State, id string, wt time.Duration) (int, error) {
	send := rt.Of(c.client).Sender(nil, 0)
	n := namesOf(st.Name)
	// How long an evicted waiter's Hub may go on listening on Redisson's
	// channel, as if its waiter had left by itself (see handoff.Ear).
	ear := handoff.Ear(send.Hub().Linger())
	var dequeue func(entry string) scripts.Request
	queue := ""
	switch st.Kind {
	case kindFairLock: // the owner id is the entry; the script finds its heartbeat
		return count(send.Send(ctx, scripts.FairDequeue{Lock: n.lock, Owner: id, Lease: fairlock.DefaultWatchdogTimeout,
			Wait: wt, Liveness: fairlock.DefaultLivenessTimeout}.Request()).Cmd)
	case kindRWLock: // a waiting writer's mark is its entry
		return count(send.Send(ctx, scripts.RWWriteWithdraw{Lock: n.rw, Entry: id}.Request()).Cmd)
	case kindMutex:
		queue = n.lock.Queue
		dequeue = func(entry string) scripts.Request {
			return scripts.MutexDequeue{Lock: n.lock, Entry: entry, Yield: scripts.YieldLock}.Request()
		}
	case kindSemaphore, kindCounter:
		queue = n.sem.Queue
		dequeue = func(entry string) scripts.Request {
			return scripts.SemDequeue{Sem: n.sem, Entry: entry, Ear: ear}.Request()
		}
	case kindPermits:
		queue = n.sem.Queue
		dequeue = func(entry string) scripts.Request {
			return scripts.PesDequeue{Sem: n.sem, Entry: entry, Ear: ear}.Request()
		}
	default:
		return 0, fmt.Errorf("a %s has no waiter queue", st.Kind)
	}
	entries, err := c.client.LRange(ctx, queue, 0, -1).Result()
	if err != nil {
		return 0, err
	}
	out := 0
	for _, entry := range entries {
		if waiterID(st.Kind, entry) != id {
			continue
		}
		if err := send.Send(ctx, dequeue(entry)).Err(); err != nil {
			return out, err
		}
		out++
	}
	return out, nil
}

// waiterID is the id inspect shows for the queue entry of a kind.
func waiterID(kind, entry string) string {
	if kind == kindMutex {
		return entryOwner(entry)
	}
	return semWaiter(kind, entry, 0, 0).Owner
}

// count decodes a dequeue script's 0 or 1 as how many entries it took out.
func count(cmd *redis.Cmd) (int, error) {
	n, err := scripts.Int(cmd)
	return int(n), err
}
