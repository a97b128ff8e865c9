package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockopt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// A Mutex is a distributed lock held on a majority of independent Redis
// masters. It must be created with New. A Mutex is safe for concurrent use
// by many goroutines.
type Mutex struct {
	clients []redis.UniversalClient
	name    string
	layout  keys.Lock // its keys on each node
	quorum  int
	queue   int // the node whose waiter queue a Hub listens to, or -1 (see queue.go)
	cfg     config

	holds *hold.Table // by owner id
}

// New returns a Mutex for the lock called name on the independent masters
// reached by clients; the quorum is len(clients)/2 + 1. It does no I/O. Any
// string is a valid name, the empty one included (see the package latchkey
// doc on names): if one of clients is a Redis Cluster client and the name's
// keys would not share a hash slot, every method of the Mutex that talks to
// Redis returns an error matching latchkey.ErrCrossSlot, without sending
// anything. New panics if clients is empty, holds a nil or repeated client,
// or an option is invalid: these are programming errors.
func New(clients []redis.UniversalClient, name string, opts ...Option) *Mutex {
	if len(clients) == 0 {
		panic("redlock: New: no clients")
	}
	for i, c := range clients {
		if why := keys.NilClient(c); why != "" {
			panic(fmt.Sprintf("redlock: New: client %d: %s", i, why))
		}
		for j := range i {
			if clients[j] == c {
				panic(fmt.Sprintf("redlock: New: client %d repeats client %d", i, j))
			}
		}
	}
	cfg := config{Common: lockopt.Common{Watchdog: DefaultWatchdogTimeout}, retryDelay: DefaultRetryDelay}
	for _, o := range opts {
		o(&cfg)
	}
	m := &Mutex{
		clients: append([]redis.UniversalClient(nil), clients...),
		name:    name,
		layout:  keys.LockOf(name),
		quorum:  len(clients)/2 + 1,
		cfg:     cfg,
		holds:   hold.New("redlock", name),
		queue:   queueNode(clients, cfg.Hub),
	}
	m.holds.Observe(clients[0])
	if m.nodeTimeout() >= m.cfg.TTL() {
		panic("redlock: New: WithNodeTimeout: timeout must be below the lease")
	}
	return m
}

// Name returns the lock's name, which is also its Redis key on every node.
func (m *Mutex) Name() string { return m.name }

// Lock acquires m on a quorum of nodes, blocking until it is available or
// ctx is done. Each attempt asks every node at once; it succeeds when a
// quorum granted the lock and the validity left (the lease minus the time
// the attempt took and the drift allowance) is positive. A failed attempt
// is undone on every node that granted it or did not answer, and retried
// after a random delay (see WithRetryDelay). If the owner carried by ctx
// (see latchkey.WithOwner) already holds m through this handle, Lock
// increments the hold count and returns at once. On failure Lock returns an
// error that matches ctx.Err(), or a *QuorumError when too many nodes
// failed to answer for a quorum to be possible, and leaves m not held.
func (m *Mutex) Lock(ctx context.Context) error {
	_, _, err := m.lock(ctx, -1)
	return err
}

// TryLock acquires m if it becomes available within wait; a wait of zero or
// less makes a single attempt. It returns true if m was acquired, and false
// with a nil error if the wait ran out, including when the last attempt
// reached a quorum too slowly to leave any validity. Other failures are as
// for Lock.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	_, ok, err := m.lock(ctx, max(wait, 0))
	return ok, err
}

// LockContext acquires m as Lock does and returns a copy of ctx that is
// cancelled when this hold ends: when it is unlocked (its last count, with
// an owner), or when it is lost (its validity ran out without a quorum
// renewal), and then context.Cause reports an error matching
// latchkey.ErrLost that says why. Done and Err report on the handle's
// latest hold instead.
func (m *Mutex) LockContext(ctx context.Context) (context.Context, error) {
	h, ok, err := m.lock(ctx, -1)
	if !ok {
		return nil, err
	}
	return m.holds.Context(ctx, h), nil
}

func (m *Mutex) lock(ctx context.Context, budget time.Duration) (*hold.Hold, bool, error) {
	if err := rt.Usable(ctx, m.name, m.clients...); err != nil {
		return nil, false, fmt.Errorf("redlock: lock %s: %w", m.name, err)
	}
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		id = owner.New() // goroutines sharing the handle exclude each other
	}
	// A Hub whose client polls (latchkey.SetPolling) has no queue: its
	// waiters look again after a random delay, as without a Hub.
	var q *queued
	if m.queue >= 0 && !rt.Polling(m.cfg.Hub.Client()) {
		q = &queued{key: id, single: budget == 0, rank: -1}
		if reentrant {
			q.key = id + "/" + owner.New() // one owner may wait in two calls
		}
	}
	var won *attempt // nil after success: the hold was re-entered
	try := func(ctx context.Context) (bool, time.Duration, error) {
		if reentrant && m.holds.Again(id, time.Now()) {
			return true, 0, nil // counted by the handle: the nodes hold once
		}
		a, err := m.try(ctx, id, q)
		switch {
		case a != nil:
			won = a
			return true, 0, nil
		case err != nil:
			return false, 0, err
		}
		return false, rand.N(m.cfg.retryDelay) + 1, nil
	}
	spec := wait.Spec{
		Client: m.clients[0],
		Event:  rt.Event{Kind: "redlock", Name: m.name, Reentered: reentrant && m.holds.Get(id) != nil},
		Hub:    m.cfg.Hub,
		Wake:   wait.Channel{Name: m.layout.Channel, Policy: notify.WakeOne},
		Call:   wait.Attempt(try),
		// A *QuorumError is final: the nodes that answered have been
		// undone, and riding out the others is what the quorum is for.
		Transient: func(error) bool { return false },
	}
	if q != nil {
		m.listen(&spec, q)
		spec.Call = queuedCall{try, func(ctx context.Context) {
			if q.mayBeQueued() {
				m.dequeue(ctx, id, q)
			}
		}}
	}
	ok, err := wait.Until(ctx, budget, spec)
	var qe *QuorumError
	switch {
	case errors.As(err, &qe):
		return nil, false, err // it names the operation and the lock
	case err != nil:
		return nil, false, fmt.Errorf("redlock: lock %s: %w", m.name, err)
	}
	if !ok {
		return nil, false, nil
	}
	if won == nil {
		return m.holds.Get(id), true, nil
	}
	return m.holds.Acquired(id, id, 0, !reentrant, 0, won.start, keeper{m, won}), true, nil
}

// Unlock releases one hold of m. With an owner in ctx it releases that
// owner's hold taken through this handle; without one it releases the
// handle's current plain hold, whichever goroutine took it. The last hold
// is released on every node at once, publishing the unlock message on
// each. Unlock returns nil if a quorum of nodes released it; an error
// matching latchkey.ErrNotHeld if the owner does not hold m, including when
// its hold was lost or a quorum of nodes no longer had it; and a
// *QuorumError if too few nodes answered to tell. Whatever it returns, the
// handle no longer counts the hold: what unreachable nodes still keep
// expires with the lease, since nothing renews it.
//
// Unlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (m *Mutex) Unlock(ctx context.Context) error {
	if err := rt.Usable(ctx, m.name, m.clients...); err != nil {
		return fmt.Errorf("redlock: unlock %s: %w", m.name, err)
	}
	_, err := wait.Cleanup(ctx, m.clients[0], func(ctx context.Context) (struct{}, error) {
		return struct{}{}, m.unlock(ctx)
	})
	if wait.Pending(err) {
		return fmt.Errorf("redlock: unlock %s: %w", m.name, err)
	}
	return err
}

// unlock is Unlock's clean-up (see wait.Cleanup).
func (m *Mutex) unlock(ctx context.Context) error {
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = m.holds.ClaimPlain(hold.Any); !ok {
			return fmt.Errorf("redlock: unlock %s: %w", m.name, lockerr.ErrNotHeld)
		}
	}
	h, last := m.holds.Detach(id)
	switch {
	case h == nil:
		return fmt.Errorf("redlock: unlock %s: %w", m.name, lockerr.ErrNotHeld)
	case !last:
		return nil
	}
	g := m.gate(nil) // the queue node's release grants: it goes last
	rs := m.fanout(ctx, func(ctx context.Context, c redis.UniversalClient) (int64, error) {
		if m.queue >= 0 && c == m.clients[m.queue] {
			g.wait(ctx, m)
			return m.queueRelease(ctx, id)
		}
		v, err := m.releaseOn(ctx, c, id)
		g.answered(err)
		return v, err
	}, nil)
	released, failed := count(rs, 1)
	notHeld, _ := count(rs, -1)
	switch {
	case released >= m.quorum:
		m.holds.Finish(h, nil)
		return nil
	case released+notHeld >= m.quorum:
		err := fmt.Errorf("redlock: %s: %w: found on %d of %d nodes at unlock, %d needed",
			m.name, lockerr.ErrLost, released, len(m.clients), m.quorum)
		m.holds.Finish(h, err)
		return fmt.Errorf("redlock: unlock %s: %w: found on %d of %d nodes, %d needed",
			m.name, lockerr.ErrNotHeld, released, len(m.clients), m.quorum)
	}
	m.holds.Finish(h, nil)
	return m.quorumError("unlock", len(rs)-failed, rs)
}

// releaseOn releases owner id's hold on the node of client c, publishing
// Redisson's unlock message there: 1 released, -1 not held.
func (m *Mutex) releaseOn(ctx context.Context, c redis.UniversalClient, id string) (int64, error) {
	rep := m.sender(c).Send(ctx, scripts.LockRelease{Lock: m.layout, Owner: id, Lease: m.cfg.TTL(),
		Record: keys.NewOnce(m.name)}.Request())
	return scripts.Int(rep.Cmd) // released on the node, replicated or not
}

// sender returns the send path to the node of client c: the queue node's
// publishes as its Hub does, every other node as its client's shared Hub.
func (m *Mutex) sender(c redis.UniversalClient) rt.Sender {
	if m.queue >= 0 && c == m.clients[m.queue] {
		return m.cfg.Sender(c)
	}
	return rt.Of(c).Sender(nil, m.cfg.Sync.Timeout())
}

// undo removes owner id's field from the given nodes, at once and with a
// context that is not cancelled, waiting at most the node timeout. It is
// how a failed attempt or a lost hold is cleaned up: a plain HDEL,
// publishing nothing, so that an attempt that never held the lock does not
// wake waiters for nothing. What it cannot remove expires with the lease.
func (m *Mutex) undo(ctx context.Context, id string, nodes []int) {
	if len(nodes) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	g := m.gate(nodes) // the queue node's release grants: it goes last
	var wg sync.WaitGroup
	for _, i := range nodes {
		wg.Go(func() { m.undoOne(ctx, id, i, g) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	timer := time.NewTimer(m.nodeTimeout())
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C: // a stalled node finishes in the background
	}
}

func (m *Mutex) undoOne(ctx context.Context, id string, node int, g *grantGate) {
	ctx, cancel := context.WithTimeout(ctx, m.nodeTimeout())
	defer cancel()
	if node == m.queue {
		g.wait(ctx, m)
		_, _ = m.queueRelease(ctx, id) // grants it to the next in line
		return
	}
	g.answered(m.clients[node].HDel(ctx, m.name, id).Err())
}

// drift is the clock drift allowance subtracted from every validity:
// 1% of the lease plus 2ms (redlock-rb's).
func (m *Mutex) drift() time.Duration { return lease.Drift(m.cfg.TTL()) }

func (m *Mutex) nodeTimeout() time.Duration {
	if m.cfg.nodeTimeout > 0 {
		return m.cfg.nodeTimeout
	}
	return m.cfg.TTL() / 20
}
