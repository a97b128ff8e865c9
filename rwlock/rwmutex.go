package rwlock

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
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/internal/wait"
	"github.com/redis/go-redis/v9"
)

var (
	readAcquireScript  = scripts.Get("rw_read_acquire")
	writeAcquireScript = scripts.Get("rw_write_acquire")
	releaseScript      = scripts.Get("rw_release")

	// wakePolicy: a write unlock ("1") wakes every waiter, so that all
	// blocked readers enter together; a read unlock ("0") wakes one.
	wakePolicy = notify.WakeAllOn("1")
)

// An RWMutex is a distributed reentrant reader/writer lock named by a Redis
// key: any number of readers or a single writer may hold it. It must be
// created with New. An RWMutex is safe for concurrent use by many
// goroutines; goroutines sharing it behave as with a shared sync.RWMutex.
// An RWMutex must not be copied after first use.
type RWMutex struct {
	client  redis.UniversalClient
	name    string
	channel string
	tag     string // {name}: the prefix of every owner's timeout keys
	cfg     config

	holds     *hold.Table // by hash field, of class read or write
	readKeep  hold.Keeper
	writeKeep hold.Keeper

	r ReadLock
	w WriteLock
}

// New returns an RWMutex for the lock called name on client. It does no
// I/O. New panics if client is nil, name is empty, its braces would split
// its keys across cluster hash slots (see the package latchkey doc on
// names), or an option is invalid: these are programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *RWMutex {
	if client == nil {
		panic("rwlock: New: nil client")
	}
	if name == "" {
		panic("rwlock: New: empty name")
	}
	if err := keys.Check(name); err != nil {
		panic("rwlock: New: " + err.Error())
	}
	cfg := config{Common: lockopt.Common{Watchdog: DefaultWatchdogTimeout}}
	for _, o := range opts {
		o(&cfg)
	}
	rw := &RWMutex{
		client:  client,
		name:    name,
		channel: keys.Prefix("redisson_rwlock", name),
		tag:     keys.Tag(name),
		cfg:     cfg,
		holds:   hold.New("rwlock: " + name),
	}
	rw.readKeep, rw.writeKeep = rw.keepers()
	rw.r.rw, rw.w.rw = rw, rw
	return rw
}

// Name returns the lock's name, which is also its Redis key.
func (rw *RWMutex) Name() string { return rw.name }

// RLock acquires rw for reading, blocking while another owner holds it for
// writing, or until ctx is done. Readers never wait for one another, nor
// for writers that are only waiting. If the owner carried by ctx (see
// latchkey.WithOwner) already holds rw, for reading or for writing, RLock
// adds a read hold and returns at once. On failure RLock returns an error
// that matches ctx.Err() or wraps the Redis error, and leaves rw as it was.
func (rw *RWMutex) RLock(ctx context.Context) error {
	_, err := rw.lock(ctx, -1, read)
	return err
}

// TryRLock acquires rw for reading if it becomes available within wait; a
// wait of zero or less makes a single attempt. It returns true if rw was
// acquired, and false with a nil error if the wait ran out. Other failures
// are as for RLock.
func (rw *RWMutex) TryRLock(ctx context.Context, wait time.Duration) (bool, error) {
	return rw.lock(ctx, max(wait, 0), read)
}

// RUnlock releases one read hold of rw. With an owner in ctx it releases
// one of that owner's read holds; without one it releases one of the
// handle's plain read holds, whichever goroutine took it. When the last
// hold of the lock is released the key is deleted and a waiting writer is
// woken. RUnlock returns an error matching latchkey.ErrNotHeld if the owner
// holds no read lock, including when its hold was lost; the lock is then
// left untouched.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	return rw.unlock(ctx, read)
}

// Lock acquires rw for writing, blocking until no other owner holds it for
// reading or writing, or until ctx is done. If the owner carried by ctx
// already holds the write lock, Lock adds a write hold and returns at once;
// if it holds only read locks, Lock returns an error matching
// latchkey.ErrWouldDeadlock at once, since it would wait for itself (to
// write, release the reads first). Without an owner in ctx, Lock waits for
// every other hold, including the handle's own plain read holds, like
// sync.RWMutex. Other failures return an error that matches ctx.Err() or
// wraps the Redis error, and leave rw as it was.
func (rw *RWMutex) Lock(ctx context.Context) error {
	_, err := rw.lock(ctx, -1, write)
	return err
}

// TryLock acquires rw for writing if it becomes available within wait; a
// wait of zero or less makes a single attempt. It returns true if rw was
// acquired, and false with a nil error if the wait ran out. Other failures,
// latchkey.ErrWouldDeadlock included, are as for Lock.
func (rw *RWMutex) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return rw.lock(ctx, max(wait, 0), write)
}

// Unlock releases one write hold of rw, for the owner in ctx or else the
// handle's plain write hold. After the owner's last write hold, readers may
// enter: if the owner still holds read locks (taken while writing), the
// lock stays read-locked by it; otherwise the key is deleted. Either way
// every waiter is woken. Unlock returns an error matching
// latchkey.ErrNotHeld if the owner holds no write lock (a read hold is not
// released by Unlock), including when its hold was lost; the lock is then
// left untouched.
func (rw *RWMutex) Unlock(ctx context.Context) error {
	return rw.unlock(ctx, write)
}

// side is read or write, the class of a hold in the books.
type side int

const (
	read  side = 0
	write side = 1
)

func (s side) String() string {
	if s == write {
		return "write"
	}
	return "read"
}

// field returns the hash field of owner id's holds on side s.
func field(id string, s side) string {
	if s == write {
		return id + ":write"
	}
	return id
}

// tooLate reports whether a hold granted by a request sent at since may
// have expired already: its lease, less the drift allowance, has passed.
func (rw *RWMutex) tooLate(since time.Time) bool {
	ttl := rw.cfg.TTL()
	return time.Since(since) >= ttl-lease.Drift(ttl)
}

// timeoutPrefix returns {name}:<id>:rwlock_timeout, the prefix of owner
// id's per-read-hold timeout keys.
func (rw *RWMutex) timeoutPrefix(id string) string {
	return keys.Suffix(rw.name, id+":rwlock_timeout")
}

func (rw *RWMutex) lock(ctx context.Context, budget time.Duration, s side) (bool, error) {
	_, ok, err := rw.take(ctx, budget, s)
	return ok, err
}

// take acquires a hold on side s within budget and returns it.
func (rw *RWMutex) take(ctx context.Context, budget time.Duration, s side) (*hold.Hold, bool, error) {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		// A fresh id per plain acquisition: goroutines sharing the handle
		// behave as with a shared sync.RWMutex, and a lost reply can be
		// undone without touching another goroutine's hold.
		id = owner.New()
	}
	script, args := readAcquireScript, []any{scripts.Ms(rw.cfg.TTL()), id, field(id, write)}
	if s == write {
		script, args = writeAcquireScript, []any{scripts.Ms(rw.cfg.TTL()), field(id, write), id}
	}
	ks := []string{rw.name, rw.timeoutPrefix(id)}
	var (
		started  time.Time
		unsure   bool // an attempt failed without a reply: it may have been applied
		hadLocal = rw.holds.Get(field(id, s)) != nil
	)
	// One request for the whole wait: a resend of an attempt that took the
	// hold finds its record, whatever attempt it belongs to; the hold is
	// then valid from since, when the earliest attempt that may have been
	// granted was sent.
	w := scripts.Write{Keys: ks, Args: args, Once: keys.Once(rw.name, owner.New()), Sync: rw.cfg.Sync.Timeout()}
	var since time.Time
	attempt := func(ctx context.Context) (bool, time.Duration, error) {
		if since.IsZero() {
			since = time.Now()
		}
		rep := script.Exec(ctx, rw.client, w)
		res, err := scripts.Ints(rep.Cmd)
		if err == nil && len(res) == 2 && res[0] == 1 && rep.Replicated() && rw.tooLate(since) {
			// The answer came back after the lease may have run out: the
			// lock may be someone else's by now. Give it back and start
			// again, under a new request.
			_, _ = rw.releaseOnce(scripts.Undo(ctx), id, s)
			since, unsure = time.Time{}, false
			w.Once = keys.Once(rw.name, owner.New())
			return false, 0, nil
		}
		if err == nil && (len(res) != 2 || res[0] != 1) {
			defer func() { since = time.Time{} }() // refused: nothing of this request was granted
		}
		started = since
		switch {
		case err != nil:
			unsure = true
			return false, 0, err
		case len(res) != 2:
			return false, 0, fmt.Errorf("latchkey: script reply: want 2 integers, got %d", len(res))
		case res[0] == 1 && !rep.Replicated():
			// Undone at once: a failover now would hand the lock to another.
			_, _ = rw.releaseOnce(scripts.Undo(ctx), id, s)
			return false, 0, rep.SyncErr()
		case res[0] == 1:
			return true, 0, nil
		case res[0] < 0:
			return false, 0, fmt.Errorf("%w: the owner holds a read lock, and a writer waits for every reader",
				lockerr.ErrWouldDeadlock)
		default:
			return false, scripts.Millis(res[1]), nil
		}
	}
	ok, err := wait.Until(ctx, budget, wait.Spec{
		Hub:     rw.cfg.HubFor(rw.client),
		Channel: rw.channel,
		Policy:  wakePolicy,
		Attempt: attempt,
		Abandon: func(ctx context.Context) {
			switch {
			case !unsure:
			case !reentrant && !hadLocal:
				_, _ = rw.release(ctx, id, s) // the grant may have landed after we gave up
			default:
				// An owner's acquisition that may have counted: its record
				// says, and a count the caller was told failed is taken
				// back, so that the owner's counts here and on the server
				// agree.
				_, applied, err := script.Resolve(ctx, rw.client, w)
				switch {
				case err != nil:
					rw.holds.Uncertain(field(id, s))
				case applied:
					_, _ = rw.releaseOnce(ctx, id, s)
				}
			}
		},
	})
	if err != nil {
		return nil, false, fmt.Errorf("rwlock: %s lock %s: %w", s, rw.name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return rw.acquired(id, s, !reentrant, started), true, nil
}

func (rw *RWMutex) unlock(ctx context.Context, s side) error {
	id, reentrant := owner.FromContext(ctx)
	if !reentrant {
		var ok bool
		if id, ok = rw.holds.ClaimPlain(int(s)); !ok {
			return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, lockerr.ErrNotHeld)
		}
	}
	// An owner whose hold this handle saw lost is not told otherwise, but
	// what is left of it on the server is released all the same.
	lost := reentrant && rw.holds.WasLost(field(id, s))
	res, err := rw.releaseOnce(ctx, id, s)
	if lost && (err == nil || errors.Is(err, lockerr.ErrNotReplicated)) {
		res, err = -1, nil
	}
	switch {
	case err != nil && !errors.Is(err, lockerr.ErrNotReplicated):
		// Whether the release applied is unknown. Either way this hold is
		// over for the handle, as for Redisson: the watchdog stops, and a
		// release that did not apply ends with the lease on the server.
		rw.holds.Abandoned(field(id, s))
		return err
	case res == -1:
		rw.released(id, s, res)
		return fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, lockerr.ErrNotHeld)
	}
	rw.released(id, s, res)
	return err
}

// release runs the release script for owner id's hold on side s and
// records its answer.
func (rw *RWMutex) release(ctx context.Context, id string, s side) (int64, error) {
	res, err := rw.releaseOnce(ctx, id, s)
	if err == nil || errors.Is(err, lockerr.ErrNotReplicated) {
		rw.released(id, s, res)
	}
	return res, err
}

// releaseOnce runs the release script for owner id's hold on side s: -1
// not held, -2 released but the owner's other read holds had expired, 0
// the owner's last hold of that side released, n > 0 holds left. An error
// matching ErrNotReplicated comes with the answer of a release that the
// master applied but no replica acknowledged.
func (rw *RWMutex) releaseOnce(ctx context.Context, id string, s side) (int64, error) {
	req := keys.Once(rw.name, owner.New())
	var rep scripts.Reply
	err := wait.Retry(ctx, func(ctx context.Context) error {
		pub, err := rw.cfg.Publish(ctx, rw.client)
		if err != nil {
			return err
		}
		rep = releaseScript.Exec(ctx, rw.client, scripts.Write{ // recorded: safe to resend
			Keys: []string{rw.name, rw.channel, rw.timeoutPrefix(id), rw.tag},
			Args: []any{field(id, s), s.String(), pub},
			Once: req,
			Sync: rw.cfg.Sync.Timeout(),
		})
		return rep.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	res, err := scripts.Int(rep.Cmd)
	if err != nil {
		return 0, fmt.Errorf("rwlock: %s unlock %s: %w", s, rw.name, err)
	}
	if err := rep.SyncErr(); err != nil && res != -1 {
		return res, fmt.Errorf("rwlock: %s unlock %s: released on the master: %w", s, rw.name, err)
	}
	return res, nil
}
