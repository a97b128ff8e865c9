package rwlock

import (
	"context"
	"sync"
	"time"

	"github.com/latchkey/latchkey/internal/hold"
)

// A ReadLock is the read side of an RWMutex as a lock of its own, with
// Lock, TryLock and Unlock taking a context (Redisson's readLock()): for
// code that takes any lock, such as a multilock over several of them. It
// shares its RWMutex's holds: ReadLock().Lock is RLock.
type ReadLock struct{ rw *RWMutex }

// A WriteLock is the write side of an RWMutex as a lock of its own, with
// Lock, TryLock and Unlock taking a context (Redisson's writeLock()). It
// shares its RWMutex's holds: WriteLock().Lock is Lock.
type WriteLock struct {
	rw *RWMutex

	// The handle's latest write hold and its token, set with the hold
	// books under mu. The books keep each hold's token, but report only
	// that of the latest hold of any class, which may be a read hold its
	// writer took under it.
	mu     sync.Mutex
	latest *hold.Hold
	token  int64
}

// ReadLock returns the read side of rw. Every call returns the same value.
func (rw *RWMutex) ReadLock() *ReadLock { return &rw.r }

// WriteLock returns the write side of rw. Every call returns the same value.
func (rw *RWMutex) WriteLock() *WriteLock { return &rw.w }

// Lock acquires the lock for reading; see RWMutex.RLock.
func (l *ReadLock) Lock(ctx context.Context) error { return l.rw.RLock(ctx) }

// LockContext acquires the lock for reading as Lock does and returns a
// copy of ctx that is cancelled when this read hold ends: when it is
// released (its owner's last read count), or when it is lost, and then
// context.Cause reports an error matching latchkey.ErrLost that says why.
// Done and Err report on the handle's latest read hold instead, which may
// be another reader's.
func (l *ReadLock) LockContext(ctx context.Context) (context.Context, error) {
	return l.rw.lockContext(ctx, read)
}

// TryLock acquires the lock for reading if it becomes available within
// wait; see RWMutex.TryRLock.
func (l *ReadLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return l.rw.TryRLock(ctx, wait)
}

// Unlock releases one read hold; see RWMutex.RUnlock.
func (l *ReadLock) Unlock(ctx context.Context) error { return l.rw.RUnlock(ctx) }

// Done returns a channel that is closed when the handle's most recently
// acquired read hold that is still live ends, by an unlock or by loss; Err
// then tells which. If the handle holds no read lock, Done returns the
// channel of its last one, or a closed channel if there was none.
func (l *ReadLock) Done() <-chan struct{} { return l.rw.holds.Done(int(read)) }

// Err returns nil while the hold that Done reports on is live, and after it
// was released. After it ended without an unlock (its lease expired, the
// key was deleted, the watchdog could not renew it) Err returns an error
// matching latchkey.ErrLost that says why.
func (l *ReadLock) Err() error { return l.rw.holds.Err(int(read)) }

// Name returns the lock's name, which is also its Redis key.
func (l *ReadLock) Name() string { return l.rw.name }

// Lock acquires the lock for writing; see RWMutex.Lock.
func (l *WriteLock) Lock(ctx context.Context) error { return l.rw.Lock(ctx) }

// LockContext acquires the lock for writing as Lock does and returns a
// copy of ctx that is cancelled when this write hold ends, as ReadLock's
// is for a read hold.
func (l *WriteLock) LockContext(ctx context.Context) (context.Context, error) {
	return l.rw.lockContext(ctx, write)
}

// TryLock acquires the lock for writing if it becomes available within
// wait; see RWMutex.TryLock.
func (l *WriteLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return l.rw.TryLock(ctx, wait)
}

// Unlock releases one write hold; see RWMutex.Unlock.
func (l *WriteLock) Unlock(ctx context.Context) error { return l.rw.Unlock(ctx) }

// Token returns the fencing token of the current write hold: a number that
// strictly increases with every write acquisition of the lock name, by any
// handle or process. It returns 0 if the handle holds no write lock. A new
// lock's first token comes from the server's clock (in microseconds), so
// tokens keep increasing after the counter expired (see the package doc's
// keys) or a restart lost it. Only latchkey's write acquisitions draw
// tokens: Redisson's read-write lock keeps none, so a Redisson client's
// hold has none either.
//
// A read hold has no token: readers hold the lock together, so no number
// could tell a stale reader from a live one. Code that writes what the
// lock guards takes the write lock, whose token fences those writes.
func (l *WriteLock) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.rw.holds.Current(int(write)); h == nil || h != l.latest {
		return 0
	}
	return l.token
}

// Done is ReadLock.Done for the write holds of the handle.
func (l *WriteLock) Done() <-chan struct{} { return l.rw.holds.Done(int(write)) }

// Err is ReadLock.Err for the write holds of the handle.
func (l *WriteLock) Err() error { return l.rw.holds.Err(int(write)) }

// Name returns the lock's name, which is also its Redis key.
func (l *WriteLock) Name() string { return l.rw.name }
