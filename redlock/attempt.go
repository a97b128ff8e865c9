package redlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// try makes one attempt for owner id, through the queue node first when q
// is not nil (see queue.go). It returns the attempt if it won the lock;
// otherwise it has undone the attempt on every node that may have granted
// it, and returns a *QuorumError if fewer than a quorum of nodes answered
// at all.
//
// RedLock is the one lock that does not run internal/acquire's state
// machine, by design: each round settles every node it asked before it
// returns (a round that did not win a quorum in time is undone on all of
// them, the unanswered included), so no attempt leaves a grant for a later
// attempt or for giving up to settle; only the queue node's entry is left,
// which the wait's clean-up takes out (see dequeue).
func (m *Mutex) try(ctx context.Context, id string, q *queued) (*attempt, error) {
	a := &attempt{m: m, owner: id, start: time.Now()}
	call := m.acquireOn(id, q)
	switch {
	case q == nil:
	case q.takeGranted():
		// Granted by a release: every node at once, the queue node to
		// take the grant.
	default:
		first := m.fanoutTo(ctx, []int{m.queue}, call, a.late)
		r := first[m.queue]
		if r.err == nil && r.v == 0 {
			a.settle(stateFailed)
			return nil, nil // queued: its turn comes with a letter
		}
		if r.err == nil {
			// The queue node's lock is the caller's: now the others.
			var others []int
			for i := range m.clients {
				if i != m.queue {
					others = append(others, i)
				}
			}
			rs := m.fanoutTo(ctx, others, call, a.late)
			rs[m.queue] = r
			return m.settleAttempt(ctx, a, rs)
		}
		// The queue node failed: every node at once, as without it.
	}
	return m.settleAttempt(ctx, a, m.fanout(ctx, call, a.late))
}

// acquireOn returns the call that asks one node for the lock for owner id:
// the queue node through its queue when q is not nil.
func (m *Mutex) acquireOn(id string, q *queued) nodeCall {
	return func(ctx context.Context, c redis.UniversalClient) (int64, error) {
		if q != nil && c == m.clients[m.queue] {
			return m.queueAttempt(ctx, id, q)
		}
		rep := m.sender(c).Send(ctx, scripts.LockAcquire{Lock: m.layout, Lease: m.cfg.TTL(), Owner: id}.Request())
		ok, _, err := scripts.Pair(rep.Cmd)
		if ok && !rep.Replicated() {
			// Not granted on a node whose failover could lose the grant;
			// undone with the others that did not count.
			return 0, rep.SyncErr()
		}
		if ok {
			return 1, err
		}
		return 0, err
	}
}

// settleAttempt decides a's attempt from the nodes' replies rs: won with a
// quorum and validity left, or else undone on every node that may have
// granted it.
func (m *Mutex) settleAttempt(ctx context.Context, a *attempt, rs []reply) (*attempt, error) {
	validity := m.cfg.TTL() - time.Since(a.start) - m.drift()
	won, failed := count(rs, 1)
	if won >= m.quorum && validity > 0 {
		a.settle(stateHeld)
		return a, nil
	}
	a.settle(stateFailed)
	var granted, unsure []int
	for i, r := range rs {
		switch {
		case r.err != nil:
			unsure = append(unsure, i)
		case r.v == 1:
			granted = append(granted, i)
		}
	}
	// A node that did not answer may have granted it all the same; if its
	// grant arrives after this undo, attempt.late undoes it again.
	go m.undo(ctx, a.owner, unsure)
	m.undo(ctx, a.owner, granted)
	if answered := len(rs) - failed; answered < m.quorum {
		return nil, m.quorumError("lock", answered, rs)
	}
	return nil, nil
}
