package rwlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockopt"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/redis/go-redis/v9"
)

// wakePolicy: a write unlock ("1") wakes every waiter, so that all blocked
// readers enter together; a read unlock ("0") wakes one, a writer if the
// Hub has one waiting (see need).
var wakePolicy = notify.WakeAllOn("1")

// An RWMutex is a distributed reentrant reader/writer lock named by a Redis
// key: any number of readers or a single writer may hold it. It must be
// created with New. An RWMutex is safe for concurrent use by many
// goroutines; goroutines sharing it behave as with a shared sync.RWMutex.
// An RWMutex must not be copied after first use.
type RWMutex struct {
	client redis.UniversalClient
	name   string
	layout keys.RWLock // its keys and channel; Writers and Epoch: see writers.go
	cfg    config

	holds     *hold.Table // by hash field, of class read or write
	readKeep  hold.Keeper
	writeKeep hold.Keeper

	r ReadLock
	w WriteLock
}

// New returns an RWMutex for the lock called name on client. It does no
// I/O. Any string is a valid name, the empty one included (see the package
// latchkey doc on names): on a Redis Cluster, a name whose keys would not
// share a hash slot makes every method of the RWMutex that talks to Redis
// return an error matching latchkey.ErrCrossSlot, without sending anything.
// New panics if client is nil or an option is invalid: these are
// programming errors.
func New(client redis.UniversalClient, name string, opts ...Option) *RWMutex {
	keys.MustClient("rwlock", client)
	cfg := config{Common: lockopt.Common{Watchdog: DefaultWatchdogTimeout}}
	for _, o := range opts {
		o(&cfg)
	}
	rw := &RWMutex{
		client: client,
		name:   name,
		layout: keys.RWLockOf(name),
		cfg:    cfg,
		holds:  hold.New("rwlock", name),
	}
	rw.holds.Observe(client)
	rw.readKeep, rw.writeKeep = rw.keepers()
	rw.r.rw, rw.w.rw = rw, rw
	return rw
}

// Name returns the lock's name, which is also its Redis key.
func (rw *RWMutex) Name() string { return rw.name }

// RLock acquires rw for reading, blocking while another owner holds it for
// writing or a latchkey writer waits for it, or until ctx is done. Readers
// never wait for one another, but once a writer waits, new readers wait
// until it has had the lock, as with sync.RWMutex. If the owner carried by
// ctx (see latchkey.WithOwner) already holds rw, for reading or for
// writing, RLock adds a read hold and returns at once, even while a writer
// waits: an owner may re-enter its reads, which sync.RWMutex forbids.
// A plain RLock (no owner in ctx) by a goroutine that already holds a
// plain read hold waits behind a waiting writer like any new reader, and
// that writer waits for the first hold: do not nest plain read holds. On
// failure RLock returns an error that matches ctx.Err() or wraps the Redis
// error, and leaves rw as it was.
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
//
// RUnlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	return rw.unlock(ctx, read)
}

// Lock acquires rw for writing, blocking until no other owner holds it for
// reading or writing, or until ctx is done. While Lock waits, new latchkey
// readers wait behind it (see the package doc), so that readers cannot
// starve it; when it gives up, they go on. If the owner carried by ctx
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
//
// Unlock returns by ctx's deadline, but its requests are not cut short by
// ctx: see "Deadlines and clean-up" in the latchkey package doc.
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

// timeoutPrefix returns {name}:<id>:rwlock_timeout, the prefix of owner
// id's per-read-hold timeout keys.
func (rw *RWMutex) timeoutPrefix(id string) string {
	return rw.layout.ReadTimeouts(id)
}
