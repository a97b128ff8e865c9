package mutex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/lockopt"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

var (
	opsScript = scripts.Get("mutex_ops")
)

// The operations of mutex_ops.lua.
const (
	opAcquire = "acquire" // try, and join the waiter queue if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
)

// queueTimeout is how long a waiter's queue entry lives unless it attempts
// again. Waiters attempt at least every wait.Backstop, refreshing it.
const queueTimeout = 3 * wait.Backstop

// grace is how long a release keeps the free lock for the waiter it tells:
// long enough for a live waiter to answer, short enough that a dead one
// costs little.
const grace = 100 * time.Millisecond

// A Mutex is a distributed reentrant lock named by a Redis key. It must be
// created with New. A Mutex is safe for concurrent use by many goroutines.
type Mutex struct {
	client  redis.UniversalClient
	name    string
	channel string   // Redisson's shared unlock channel
	hubs    string   // prefix of each Hub's channel, told when its waiter is first in line
	keys    []string // mutex_ops's KEYS
	cfg     config

	holds *hold.Table
}

// New returns a Mutex for the lock called name on client. It does no I/O.
// New panics if client is nil, name is empty, its braces would split its
// keys across cluster hash slots (see the package latchkey doc on names),
// or an option is invalid: these are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Mutex {
	if client == nil {
		panic("mutex: New: nil client")
	}
	if name == "" {
		panic("mutex: New: empty name")
	}
	if err := keys.Check(name); err != nil {
		panic("mutex: New: " + err.Error())
	}
	cfg := config{Common: lockopt.Common{Watchdog: DefaultWatchdogTimeout}}
	for _, o := range opts {
		o(&cfg)
	}
	channel := keys.LockChannel(name)
	hubs := keys.Prefix("latchkey_lock__channel", name)
	return &Mutex{
		client:  client,
		name:    name,
		channel: channel,
		hubs:    hubs,
		keys: []string{
			name,
			keys.TokenKey(name),
			keys.Prefix("latchkey_lock_queue", name),
			keys.Prefix("latchkey_lock_timeout", name),
			channel,
			hubs,
			keys.Prefix("latchkey_lock_grant", name),
		},
		cfg: cfg,
		holds: hold.New(client, "mutex: "+name, hold.Keep{
			Lease:    cfg.Fixed,
			Watchdog: cfg.Watchdog,
			Sync:     cfg.Sync.Timeout(),
			Kind:     lease.HashLock,
			Keys:     []string{name},
			Args:     func(id string) []any { return []any{id} },
		}),
	}
}

// Name returns the lock's name, which is also its Redis key.
func (m *Mutex) Name() string { return m.name }

// Lock acquires m, blocking until it is available or ctx is done. If the
// owner carried by ctx (see latchkey.WithOwner) already holds m, Lock
// increments the hold count and returns at once; without an owner a Lock
// waits for every other hold, including one taken through m. On failure Lock
// returns an error that matches ctx.Err() or wraps the Redis error, and
// leaves m as it was.
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.lock(ctx, -1)
	return err
}

// TryLock acquires m if it becomes available within wait; a wait of zero or
// less makes a single attempt. It returns true if m was acquired, and false
// with a nil error if the wait ran out. Other failures are as for Lock.
// A lock just released while others were queued is kept for the first of
// them for a short grace (see the package documentation), so a single
// attempt can find it free yet not get it.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return m.lock(ctx, max(wait, 0))
}

func (m *Mutex) lock(ctx context.Context, budget time.Duration) (bool, error) {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		// A fresh id per plain Lock: goroutines sharing the handle exclude
		// each other, and a lost reply can be undone without touching
		// another goroutine's hold.
		id = owner.New()
	}
	hub := m.cfg.HubFor(m.client)
	pub, err := hub.PublishCommand(ctx)
	if err != nil {
		return false, fmt.Errorf("mutex: lock %s: %w", m.name, err)
	}
	op := opAcquire
	if budget == 0 {
		op = opTry
	}
	var (
		token   int64
		started time.Time
		rank    int64 // place in the waiter queue, lowered by each release heard
		unsure  bool  // an attempt failed without a reply: it may have been applied
	)
	// An acquisition by an owner that may re-enter is recorded against
	// its request, so that a resend does not count twice; a fresh id needs
	// no record, since finding itself present already tells.
	req := ""
	if reentrant {
		req = keys.Once(m.name, owner.New())
	}
	attempt := func(ctx context.Context) (bool, time.Duration, error) {
		started = time.Now()
		rep := m.exec(ctx, op, id, hub.ID(), reentrant, started, pub, req)
		vs, err := scripts.Ints(rep.Cmd)
		switch {
		case err == nil && len(vs) != 3:
			err = fmt.Errorf("latchkey: script reply: want 3 integers, got %d", len(vs))
		case err == nil && vs[0] == 1 && !rep.Replicated():
			// Undone at once: a failover now would hand the lock to another.
			_, _ = m.releaseOnce(scripts.Undo(ctx), id, reentrant)
			return false, 0, fmt.Errorf("mutex: lock %s: %w", m.name, rep.SyncErr())
		case err == nil && vs[0] == 1:
			token = vs[1]
			return true, 0, nil
		case err == nil:
			rank = vs[2]
			return false, scripts.Millis(vs[1]), nil
		}
		unsure = true
		return false, 0, fmt.Errorf("mutex: lock %s: %w", m.name, err)
	}
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     hub,
		Channel: m.hubs + ":" + hub.ID(),
		Policy:  notify.WakeOne,
		// Every release, by latchkey or by Redisson, publishes on the shared
		// channel, and latchkey's also tells the Hub of the first waiter
		// in line. A waiter with rank waiters ahead of it tries again
		// after rank+1 releases: by then each of those has had its turn,
		// so each release sets off one attempt, not one per client. The
		// waiter next after the one told tries once the grace is over, in
		// case that one died and will never take its turn.
		Hint:       m.channel,
		HintPolicy: notify.WakeAll,
		Heard: func() (bool, time.Duration) {
			rank--
			if rank == 0 {
				return false, grace + 10*time.Millisecond
			}
			return rank < 0, 0
		},
		Attempt: attempt,
		Abandon: func(ctx context.Context) {
			if op == opAcquire {
				_ = m.exec(ctx, opDequeue, id, hub.ID(), reentrant, time.Now(), pub, "").Err()
			}
			// The grant may have landed after we gave up. Only a fresh id can
			// be undone safely: an owner's id may hold through other handles.
			if unsure && !reentrant {
				_ = m.release(ctx, id)
			}
		},
	})
	if !ok {
		return false, err
	}
	m.holds.Acquired(id, !reentrant, token, started)
	return true, nil
}

// exec runs mutex_ops for owner id waiting through the Hub hubID, its
// script sent at now, recorded against req unless that is "". Acquisitions
// and releases wait for replicas; dequeues and forced unlocks need not.
func (m *Mutex) exec(ctx context.Context, op, id, hubID string, reentrant bool, now time.Time, pub, req string) scripts.Reply {
	flag := "0"
	if reentrant {
		flag = "1"
	}
	w := scripts.Write{
		Keys: m.keys,
		Args: []any{op, id, hubID + "/" + id, scripts.Ms(m.cfg.TTL()), flag, now.UnixMilli(),
			scripts.Ms(queueTimeout), pub, scripts.Ms(grace)},
		Once: req,
	}
	if op != opDequeue && op != opForce {
		w.Sync = m.cfg.Sync.Timeout()
	}
	return opsScript.Exec(ctx, m.client, w)
}

// Unlock releases one hold of m. With an owner in ctx it releases that
// owner's hold (even one taken in another process, see
// latchkey.WithOwnerID); without one it releases the handle's current plain
// hold, whichever goroutine took it. When the last hold is released the key
// is deleted and one waiter is woken. Unlock returns an error matching
// latchkey.ErrNotHeld if the owner does not hold m, including when its hold
// was lost; the lock is then left untouched.
func (m *Mutex) Unlock(ctx context.Context) error {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		var ok bool
		if id, ok = m.holds.ClaimPlain(); !ok {
			return fmt.Errorf("mutex: unlock %s: %w", m.name, lockerr.ErrNotHeld)
		}
	}
	res, err := m.releaseOnce(ctx, id, reentrant)
	switch {
	case err != nil && !errors.Is(err, lockerr.ErrNotReplicated):
		// Whether the release applied is unknown. Either way this hold is
		// over for the handle, as for Redisson: the watchdog stops, and a
		// release that did not apply ends with the lease on the server.
		m.holds.Abandoned(id)
		return err
	case res < 0:
		m.holds.Released(id, res)
		return fmt.Errorf("mutex: unlock %s: %w", m.name, lockerr.ErrNotHeld)
	}
	m.holds.Released(id, res)
	return err
}

func (m *Mutex) release(ctx context.Context, id string) error {
	res, err := m.releaseOnce(ctx, id, false)
	if err == nil {
		m.holds.Released(id, res)
	}
	return err
}

// releaseOnce runs the release script: -1 not held, 0 still held, 1
// released. An error matching ErrNotReplicated comes with the result of a
// release that the master applied but no replica acknowledged.
func (m *Mutex) releaseOnce(ctx context.Context, id string, reentrant bool) (int64, error) {
	pub, err := m.cfg.HubFor(m.client).PublishCommand(ctx)
	if err != nil {
		return 0, fmt.Errorf("mutex: unlock %s: %w", m.name, err)
	}
	rep := m.exec(ctx, opRelease, id, "", reentrant, time.Now(), pub, keys.Once(m.name, owner.New()))
	res, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, fmt.Errorf("mutex: unlock %s: %w", m.name, err)
	}
	if err := rep.SyncErr(); err != nil && res >= 0 {
		return res, fmt.Errorf("mutex: unlock %s: released on the master: %w", m.name, err)
	}
	return res, nil
}
