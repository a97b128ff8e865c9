package redlock

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

// With a Hub (WithHub), the node whose client the Hub uses keeps the lock
// there as the mutex keeps it on its one server
// (scripts/fragment/mutex.lua): waiters queue beside it, and a release
// grants that node's lock to the first waiter in line with a letter on its
// Hub's channel. An attempt asks that node first, and the others only once
// it holds that node's lock, so a waiter's attempt costs one round trip
// until its turn comes, and a release wakes one waiter of all clients
// rather than one per client. The quorum decides as ever: the queue node's
// lock counts as one node's. An attempt whose queue node fails asks every
// node at once, as without a Hub, so that a RedLock never waits on one
// node.

// queueNode returns the index of the client that h uses, or -1.
func queueNode(clients []redis.UniversalClient, h *notify.Hub) int {
	if h == nil {
		return -1
	}
	for i, c := range clients {
		if c == h.Client() {
			return i
		}
	}
	return -1
}

// A queued is a Lock call's place in the queue node's waiter queue. Its
// attempts' calls to the queue node may outlive them (a node timeout), so
// what they learn is guarded by mu.
type queued struct {
	key    string // the call's letters' key: its owner id, or <id>/<call>
	single bool   // a single attempt, which never queues

	mu    sync.Mutex
	maybe bool  // an attempt may have joined the queue
	rank  int64 // the call's place in the queue at its latest attempt, 0 at the head, -1 until queued
	// granted: a letter said that a release granted the call the queue
	// node's lock, so its next attempt asks every node at once
	granted bool
	heard   bool // letters reach the call (see wait.Mail.Live)
}

// learn notes what an attempt's call to the queue node said: whether the
// call may be queued now, and its rank if the answer gave one (rank < 0:
// none).
func (q *queued) learn(maybe bool, rank int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.maybe = q.maybe || maybe
	if rank >= 0 {
		q.rank = rank
	}
}

// mayQueue reports whether an attempt may join the queue: not a single
// attempt, nor one whose letters nobody hears yet, since a release drops
// a waiter that nobody hears.
func (q *queued) mayQueue() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.single && q.heard
}

func (q *queued) mayBeQueued() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.maybe
}

func (q *queued) head() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rank == 0
}

func (q *queued) setGranted(g bool) {
	q.mu.Lock()
	q.granted = g
	q.mu.Unlock()
}

// takeGranted reports whether a letter said the call was granted, and
// forgets it.
func (q *queued) takeGranted() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	g := q.granted
	q.granted = false
	return g
}

// entry is q's entry in the queue: the Hub, and the letters' key.
func (m *Mutex) entry(q *queued) string { return m.cfg.Hub.ID() + "/" + q.key }

// queueSend sends req, a request of one of the mutex's scripts, to the
// queue node, which never yields to Redisson's waiters: its queue's head
// listens on Redisson's channel.
func (m *Mutex) queueSend(ctx context.Context, req scripts.Request) rt.Reply {
	return m.cfg.Sender(m.clients[m.queue]).Send(ctx, req)
}

// queueAttempt asks the queue node for its lock: 1 if it holds it (taken,
// or granted by a release), 0 if it joined the queue (or, for a single
// attempt, found the lock held).
func (m *Mutex) queueAttempt(ctx context.Context, id string, q *queued) (int64, error) {
	try := !q.mayQueue()
	rep := m.queueSend(ctx, scripts.MutexAcquire{Lock: m.layout, Owner: id, Entry: m.entry(q), Lease: m.cfg.TTL(),
		Reentry: scripts.Fresh, Queued: q.mayBeQueued(), Try: try, YieldFor: handoff.Yield}.Request())
	vs, err := scripts.Ints(rep.Cmd)
	rank := int64(-1)
	if err == nil && len(vs) > 2 && vs[0] == 0 {
		rank = vs[2]
	}
	q.learn(!try && (err != nil || len(vs) > 0 && vs[0] == 0), rank)
	switch {
	case err != nil:
		return 0, err
	case len(vs) > 0 && vs[0] == 1 && !rep.Replicated():
		return 0, rep.SyncErr() // undone with the others
	case len(vs) > 0 && vs[0] == 1:
		return 1, nil
	}
	return 0, nil
}

// queueRelease releases owner id's lock on the queue node, granting it to
// the next waiter in line; it returns the script's answer: 1 released, 0
// holds remain, -1 not held.
func (m *Mutex) queueRelease(ctx context.Context, id string) (int64, error) {
	n, err := scripts.Int(m.queueSend(ctx, scripts.MutexRelease{Lock: m.layout, Owner: id, Lease: m.cfg.TTL(),
		Yield: scripts.NoYield, Record: keys.NewOnce(m.name)}.Request()).Cmd)
	if n == scripts.ReleasedQueued {
		n = 1
	}
	return n, err
}

// A grantGate holds back a release's part on the queue node, which grants
// the lock to the next waiter in line, until the release is done on enough
// of the other nodes. That waiter then asks every node at once: should it
// find the lock still held there by the owner releasing it (those releases
// sent at the same time but slower, as on a starved machine), it would
// miss the quorum, give the lock back, and lose its turn to the waiter
// behind it. The gate opens once need of the others answered without
// error (with the queue node's lock, what the next waiter needs), or all
// of them answered.
type grantGate struct {
	mu   sync.Mutex
	need int // answers without error still needed
	left int // other nodes that have not answered
	open chan struct{}
}

// gate returns the grant gate of a release by one owner on the given
// nodes (nil: all), or nil when it needs none: the queue node is not among
// them, or no other node is.
func (m *Mutex) gate(nodes []int) *grantGate {
	if nodes == nil {
		nodes = make([]int, len(m.clients))
		for i := range nodes {
			nodes[i] = i
		}
	}
	others := 0
	for _, i := range nodes {
		if i != m.queue {
			others++
		}
	}
	if m.queue < 0 || others == len(nodes) || others == 0 {
		return nil
	}
	return &grantGate{need: min(m.quorum-1, others), left: others, open: make(chan struct{})}
}

// answered notes another node's answer to the release: err is nil if it
// released there, or found nothing of the owner's to release. A nil g
// notes nothing.
func (g *grantGate) answered(err error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	wasOpen := g.need <= 0 || g.left <= 0
	g.left--
	if err == nil {
		g.need--
	}
	if !wasOpen && (g.need <= 0 || g.left <= 0) {
		close(g.open)
	}
}

// wait blocks until g opens, ctx ends, or half the node timeout passed:
// the release on the queue node, which the caller sends next, still has
// the other half. A nil g is open.
func (g *grantGate) wait(ctx context.Context, m *Mutex) {
	if g == nil {
		return
	}
	t := time.NewTimer(m.nodeTimeout() / 2)
	defer t.Stop()
	select {
	case <-g.open:
	case <-t.C:
	case <-ctx.Done():
	}
}

// dequeue takes a call that gave up out of the queue, giving back the
// queue node's lock if a release granted it meanwhile.
func (m *Mutex) dequeue(ctx context.Context, id string, q *queued) {
	ctx, cancel := context.WithTimeout(ctx, m.nodeTimeout())
	defer cancel()
	_ = m.queueSend(ctx, scripts.MutexDequeue{Lock: m.layout, Entry: m.entry(q), Yield: scripts.NoYield}.Request()).Err()
}

// listen makes a waiter sleep on its Hub's own channel, where the queue
// node's releases write it letters: a grant asks for an attempt at once,
// which takes it; "next" (the waiter ahead was granted the lock) or an
// empty letter asks for one once the grace is over, in case that grant is
// never taken. A release that grants nothing (by a handle without this
// Hub, or a Redisson client) only publishes on Redisson's channel, which
// the head of the queue alone listens to: it attempts shortly after such a
// message, unless a letter came first. Otherwise the waiter sleeps for the
// random retry delay, which also covers an expired lease.
func (m *Mutex) listen(s *wait.Spec, q *queued) {
	s.Wake = wait.Channel{Name: m.layout.Hubs + ":" + m.cfg.Hub.ID(), Policy: notify.WakeOne}
	s.Mail = queueMail{q}
	s.Hint = queueHint{q, m.layout.Channel}
}

// queueMail takes the queue node's letters to a queued call: a grant asks
// for an attempt at once, which takes it.
type queueMail struct{ q *queued }

func (m queueMail) Key() string { return m.q.key }

func (m queueMail) Live(heard bool) {
	m.q.mu.Lock()
	m.q.heard = heard
	m.q.mu.Unlock()
}

func (m queueMail) Letter(body string, at time.Time) (bool, time.Duration) {
	within, _ := handoff.TakeLetter(body, at)
	m.q.setGranted(handoff.IsGrant(body))
	return false, within
}

// queueHint is Redisson's channel, which the head of the queue alone
// listens to, for releases that grant nothing.
type queueHint struct {
	q       *queued
	channel string
}

func (h queueHint) Channel() wait.Channel         { return wait.Channel{Name: h.channel} }
func (h queueHint) Active() bool                  { return h.q.head() }
func (queueHint) Expect() int                     { return 1 }
func (queueHint) Heard(int) (bool, time.Duration) { return false, handoff.LetterWait }

// queuedCall is a queued call's attempts, and its leaving of the queue
// when it gives up.
type queuedCall struct {
	attempt wait.Attempt
	abandon func(ctx context.Context)
}

func (c queuedCall) Attempt(ctx context.Context) (bool, time.Duration, error) { return c.attempt(ctx) }
func (c queuedCall) Abandon(ctx context.Context)                              { c.abandon(ctx) }
