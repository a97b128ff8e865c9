package fairlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

var opsScript = scripts.Get("fairlock_ops")

// The operations of fairlock_ops.lua.
const (
	opAcquire = "acquire" // try, and queue up if not acquired
	opTry     = "try"     // try once, leaving no trace
	opRelease = "release"
	opDequeue = "dequeue"
	opForce   = "force"
)

// A Mutex is a distributed reentrant lock named by a Redis key that is
// granted in the order it was asked for. It must be created with New. A
// Mutex is safe for concurrent use by many goroutines.
type Mutex struct {
	client  redis.UniversalClient
	name    string
	keys    []string // lock, queue, deadlines, heartbeats, channel prefix: fairlock_ops's KEYS
	channel string   // prefix of each waiter's own channel
	cfg     config

	holds *hold.Table
}

// New returns a Mutex for the fair lock called name on client. It does no
// I/O. New panics if client is nil, name is empty, its braces would split
// its keys across cluster hash slots (see the package latchkey doc on
// names), or an option is invalid: these are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Mutex {
	if client == nil {
		panic("fairlock: New: nil client")
	}
	if name == "" {
		panic("fairlock: New: empty name")
	}
	if err := keys.Check(name); err != nil {
		panic("fairlock: New: " + err.Error())
	}
	cfg := config{
		Common:   lockopt.Common{Watchdog: DefaultWatchdogTimeout},
		wait:     DefaultWaitTimeout,
		liveness: DefaultLivenessTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	channel := keys.LockChannel(name)
	return &Mutex{
		client: client,
		name:   name,
		keys: []string{
			name,
			keys.Prefix("redisson_lock_queue", name),
			keys.Prefix("redisson_lock_timeout", name),
			keys.Prefix("latchkey_lock_heartbeat", name),
			channel,
		},
		channel: channel,
		cfg:     cfg,
		holds: hold.New(client, "fairlock: "+name, hold.Keep{
			Lease:    cfg.Fixed,
			Watchdog: cfg.Watchdog,
			Sync:     cfg.Sync.Timeout(),
			Kind:     lease.HashLock, // Redisson renews a fair lock as a plain lock
			Keys:     []string{name},
			Args:     func(id string) []any { return []any{id} },
		}),
	}
}

// Name returns the lock's name, which is also its Redis key.
func (m *Mutex) Name() string { return m.name }

// Lock acquires m, blocking until it is available or ctx is done. Callers
// that have to wait are served in the order they started waiting, across
// all processes. If the owner carried by ctx (see latchkey.WithOwner)
// already holds m, Lock increments the hold count and returns at once;
// without an owner a Lock waits for every other hold, including one taken
// through m. On failure Lock returns an error that matches ctx.Err() or
// wraps the Redis error, and leaves m and the queue as they were.
func (m *Mutex) Lock(ctx context.Context) error {
	_, err := m.lock(ctx, -1)
	return err
}

// TryLock acquires m if it becomes available within wait, queueing in the
// meantime like Lock; a wait of zero or less makes a single attempt, which
// succeeds only if m is free and nobody is queued for it. TryLock returns
// true if m was acquired, and false with a nil error if the wait ran out;
// its place in the queue is then given up. Other failures are as for Lock.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return m.lock(ctx, max(wait, 0))
}

func (m *Mutex) lock(ctx context.Context, budget time.Duration) (bool, error) {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		// A fresh id per plain Lock: goroutines sharing the handle queue
		// and exclude each other, and each has a channel of its own.
		id = owner.New()
	}
	op := opAcquire
	if budget == 0 {
		op = opTry
	}
	var (
		started time.Time
		unsure  bool // an attempt failed without a reply: it may have been applied
		hub     = m.cfg.HubFor(m.client)
		req     string
	)
	if reentrant {
		// A re-entry is recorded against its request, so that a resend
		// does not count twice; a fresh id finds itself holding instead.
		req = keys.Once(m.name, owner.New())
	}
	attempt := func(ctx context.Context) (bool, time.Duration, error) {
		started = time.Now()
		rep := m.exec(ctx, hub, op, id, started, reentrant, req)
		ok, v, err := scripts.Pair(rep.Cmd)
		switch {
		case err != nil:
			unsure = true
			return false, 0, fmt.Errorf("fairlock: lock %s: %w", m.name, err)
		case ok && !rep.Replicated():
			// Undone at once: a failover now would hand the lock to another.
			_, _ = m.releaseOnce(scripts.Undo(ctx), id)
			return false, 0, fmt.Errorf("fairlock: lock %s: %w", m.name, rep.SyncErr())
		case ok:
			return true, 0, nil
		default:
			return false, scripts.Millis(v), nil
		}
	}
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     hub,
		Channel: m.channel + ":" + id,
		Policy:  notify.WakeOne,
		Attempt: attempt,
		Abandon: func(ctx context.Context) {
			if op == opAcquire {
				// Leave the queue at once, waking the next waiter if we
				// were first, rather than stalling it for the liveness timeout.
				_ = m.exec(ctx, hub, opDequeue, id, time.Now(), reentrant, "").Err()
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
	m.holds.Acquired(id, !reentrant, 0, started)
	return true, nil
}

// Unlock releases one hold of m. With an owner in ctx it releases that
// owner's hold (even one taken in another process, see
// latchkey.WithOwnerID); without one it releases the handle's current plain
// hold, whichever goroutine took it. When the last hold is released the key
// is deleted and the first waiter in the queue, only that one, is woken.
//
// Unlock returns an error matching latchkey.ErrNotHeld if the owner does
// not hold m, including when its hold was lost; the lock is then left
// untouched. Redisson's fair unlock reports success when the lock key is
// gone; Unlock reports ErrNotHeld like every other latchkey unlock, but
// like Redisson it still wakes the first waiter if the lock is free.
func (m *Mutex) Unlock(ctx context.Context) error {
	id, ok := owner.FromContext(ctx)
	if !ok {
		if id, ok = m.holds.ClaimPlain(); !ok {
			return fmt.Errorf("fairlock: unlock %s: %w", m.name, lockerr.ErrNotHeld)
		}
	}
	res, err := m.releaseOnce(ctx, id)
	switch {
	case err != nil && !errors.Is(err, lockerr.ErrNotReplicated):
		// Whether the release applied is unknown. Either way this hold is
		// over for the handle, as for Redisson: the watchdog stops, and a
		// release that did not apply ends with the lease on the server.
		m.holds.Abandoned(id)
		return err
	case res < 0:
		m.holds.Released(id, res)
		return fmt.Errorf("fairlock: unlock %s: %w", m.name, lockerr.ErrNotHeld)
	}
	m.holds.Released(id, res)
	return err
}

func (m *Mutex) release(ctx context.Context, id string) error {
	res, err := m.releaseOnce(ctx, id)
	if err == nil || errors.Is(err, lockerr.ErrNotReplicated) {
		m.holds.Released(id, res)
	}
	return err
}

// releaseOnce runs the release operation: -1 not held, 0 still held, 1
// released. An error matching ErrNotReplicated comes with the answer of a
// release that the master applied but no replica acknowledged.
func (m *Mutex) releaseOnce(ctx context.Context, id string) (int64, error) {
	rep := m.exec(ctx, m.cfg.HubFor(m.client), opRelease, id, time.Now(), true, keys.Once(m.name, owner.New()))
	res, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, fmt.Errorf("fairlock: unlock %s: %w", m.name, err)
	}
	if err := rep.SyncErr(); err != nil && res >= 0 {
		return res, fmt.Errorf("fairlock: unlock %s: released on the master: %w", m.name, err)
	}
	return res, nil
}

// exec runs one operation of fairlock_ops.lua for owner id at time now,
// recorded against req unless that is ""; reentrant tells an acquisition
// whether id may already hold the lock. Acquisitions and releases wait for
// replicas; dequeues and forced unlocks need not.
func (m *Mutex) exec(ctx context.Context, hub *notify.Hub, op, id string, now time.Time, reentrant bool, req string) scripts.Reply {
	pub, err := hub.PublishCommand(ctx)
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return scripts.Reply{Cmd: cmd}
	}
	flag := "0"
	if reentrant {
		flag = "1"
	}
	w := scripts.Write{
		Keys: m.keys,
		Args: []any{op, id, now.UnixMilli(), pub,
			scripts.Ms(m.cfg.TTL()), scripts.Ms(m.cfg.wait), scripts.Ms(m.cfg.liveness), flag},
		Once: req,
	}
	if op != opDequeue && op != opForce {
		w.Sync = m.cfg.Sync.Timeout()
	}
	return opsScript.Exec(ctx, m.client, w)
}
