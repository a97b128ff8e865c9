package mutex

import (
	"context"
	"fmt"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/latchkey/latchkey/scripts"
	"github.com/redis/go-redis/v9"
)

var (
	acquireScript = scripts.Get("lock_acquire")
	releaseScript = scripts.Get("lock_release")
	forceScript   = scripts.Get("lock_force_release")
)

// A Mutex is a distributed reentrant lock named by a Redis key. It must be
// created with New. A Mutex is safe for concurrent use by many goroutines.
type Mutex struct {
	client   redis.UniversalClient
	name     string
	channel  string
	tokenKey string
	cfg      config

	holds *hold.Table
}

// New returns a Mutex for the lock called name on client. It does no I/O.
// New panics if client is nil, name is empty or an option is invalid: these
// are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *Mutex {
	if client == nil {
		panic("mutex: New: nil client")
	}
	if name == "" {
		panic("mutex: New: empty name")
	}
	cfg := config{watchdog: DefaultWatchdogTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return &Mutex{
		client:   client,
		name:     name,
		channel:  keys.LockChannel(name),
		tokenKey: keys.TokenKey(name),
		cfg:      cfg,
		holds: hold.New(client, "mutex: "+name, hold.Keep{
			Lease:    cfg.lease,
			Watchdog: cfg.watchdog,
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
	leaseMs := scripts.Ms(m.lease())
	flag := "0"
	if reentrant {
		flag = "1"
	}
	var (
		token   int64
		started time.Time
		unsure  bool // an attempt failed without a reply: it may have been applied
	)
	attempt := func(ctx context.Context) (bool, time.Duration, error) {
		started = time.Now()
		ok, v, err := scripts.Pair(acquireScript.Run(ctx, m.client, []string{m.name, m.tokenKey}, leaseMs, id, flag))
		switch {
		case err != nil:
			unsure = true
			return false, 0, fmt.Errorf("mutex: lock %s: %w", m.name, err)
		case ok:
			token = v
			return true, 0, nil
		default:
			return false, scripts.Millis(v), nil
		}
	}
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     m.hub(),
		Channel: m.channel,
		Policy:  pubsub.WakeOne,
		Attempt: attempt,
		Abandon: func(ctx context.Context) {
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

// Unlock releases one hold of m. With an owner in ctx it releases that
// owner's hold (even one taken in another process, see
// latchkey.WithOwnerID); without one it releases the handle's current plain
// hold, whichever goroutine took it. When the last hold is released the key
// is deleted and one waiter is woken. Unlock returns an error matching
// latchkey.ErrNotHeld if the owner does not hold m, including when its hold
// was lost; the lock is then left untouched.
func (m *Mutex) Unlock(ctx context.Context) error {
	id, ok := owner.FromContext(ctx)
	plain := !ok
	if plain {
		if id, ok = m.holds.ClaimPlain(); !ok {
			return fmt.Errorf("mutex: unlock %s: %w", m.name, lockerr.ErrNotHeld)
		}
	}
	res, err := m.releaseOnce(ctx, id)
	if err != nil {
		if plain {
			m.holds.Unclaim(id)
		}
		return err
	}
	m.holds.Released(id, res)
	if res < 0 {
		return fmt.Errorf("mutex: unlock %s: %w", m.name, lockerr.ErrNotHeld)
	}
	return nil
}

func (m *Mutex) release(ctx context.Context, id string) error {
	res, err := m.releaseOnce(ctx, id)
	if err == nil {
		m.holds.Released(id, res)
	}
	return err
}

// releaseOnce runs the release script: -1 not held, 0 still held, 1 released.
func (m *Mutex) releaseOnce(ctx context.Context, id string) (int64, error) {
	pub, err := m.hub().PublishCommand(ctx)
	if err != nil {
		return 0, fmt.Errorf("mutex: unlock %s: %w", m.name, err)
	}
	res, err := scripts.Int(releaseScript.Run(ctx, m.client, []string{m.name, m.channel}, id, scripts.Ms(m.lease()), pub))
	if err != nil {
		return 0, fmt.Errorf("mutex: unlock %s: %w", m.name, err)
	}
	return res, nil
}

func (m *Mutex) lease() time.Duration {
	if m.cfg.lease > 0 {
		return m.cfg.lease
	}
	return m.cfg.watchdog
}

func (m *Mutex) hub() *pubsub.Hub {
	if m.cfg.hub != nil {
		return m.cfg.hub
	}
	return pubsub.Shared(m.client)
}
