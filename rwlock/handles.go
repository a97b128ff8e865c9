package rwlock

import (
	"context"
	"time"
)

// A ReadLock is the read side of an RWMutex as a lock of its own, with
// Lock, TryLock and Unlock taking a context (Redisson's readLock()): for
// code that takes any lock, such as a multilock over several of them. It
// shares its RWMutex's holds: ReadLock().Lock is RLock.
type ReadLock struct{ rw *RWMutex }

// A WriteLock is the write side of an RWMutex as a lock of its own, with
// Lock, TryLock and Unlock taking a context (Redisson's writeLock()). It
// shares its RWMutex's holds: WriteLock().Lock is Lock.
type WriteLock struct{ rw *RWMutex }

// ReadLock returns the read side of rw. Every call returns the same value.
func (rw *RWMutex) ReadLock() *ReadLock { return &rw.r }

// WriteLock returns the write side of rw. Every call returns the same value.
func (rw *RWMutex) WriteLock() *WriteLock { return &rw.w }

// Lock acquires the lock for reading; see RWMutex.RLock.
func (l *ReadLock) Lock(ctx context.Context) error { return l.rw.RLock(ctx) }

// LockContext acquires the lock for reading and returns a context
// cancelled when this read hold ends; see RWMutex.RLockContext.
func (l *ReadLock) LockContext(ctx context.Context) (context.Context, error) {
	return l.rw.RLockContext(ctx)
}

// TryLock acquires the lock for reading if it becomes available within
// wait; see RWMutex.TryRLock.
func (l *ReadLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return l.rw.TryRLock(ctx, wait)
}

// Unlock releases one read hold; see RWMutex.RUnlock.
func (l *ReadLock) Unlock(ctx context.Context) error { return l.rw.RUnlock(ctx) }

// Done is RWMutex.Done for the read holds of the handle only.
func (l *ReadLock) Done() <-chan struct{} { return l.rw.holds.Done(int(read)) }

// Err is RWMutex.Err for the read holds of the handle only.
func (l *ReadLock) Err() error { return l.rw.holds.Err(int(read)) }

// Name returns the lock's name, which is also its Redis key.
func (l *ReadLock) Name() string { return l.rw.name }

// Lock acquires the lock for writing; see RWMutex.Lock.
func (l *WriteLock) Lock(ctx context.Context) error { return l.rw.Lock(ctx) }

// LockContext acquires the lock for writing and returns a context
// cancelled when this write hold ends; see RWMutex.LockContext.
func (l *WriteLock) LockContext(ctx context.Context) (context.Context, error) {
	return l.rw.LockContext(ctx)
}

// TryLock acquires the lock for writing if it becomes available within
// wait; see RWMutex.TryLock.
func (l *WriteLock) TryLock(ctx context.Context, wait time.Duration) (bool, error) {
	return l.rw.TryLock(ctx, wait)
}

// Unlock releases one write hold; see RWMutex.Unlock.
func (l *WriteLock) Unlock(ctx context.Context) error { return l.rw.Unlock(ctx) }

// Done is RWMutex.Done for the write holds of the handle only.
func (l *WriteLock) Done() <-chan struct{} { return l.rw.holds.Done(int(write)) }

// Err is RWMutex.Err for the write holds of the handle only.
func (l *WriteLock) Err() error { return l.rw.holds.Err(int(write)) }

// Name returns the lock's name, which is also its Redis key.
func (l *WriteLock) Name() string { return l.rw.name }
