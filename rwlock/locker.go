package rwlock

import (
	"context"
	"sync"
)

// Locker returns a sync.Locker whose Lock and Unlock call rw's Lock and
// Unlock with a background context, for code written against sync.Locker
// (sync.Cond, for one). It has sync.RWMutex's contract: Lock blocks until
// acquired, and an Unlock of a write lock that the handle does not hold
// panics, as does any Redis error, since sync.Locker has no way to return
// one.
func (rw *RWMutex) Locker() sync.Locker { return locker{rw.Lock, rw.Unlock} }

// RLocker returns a sync.Locker whose Lock and Unlock call rw's RLock and
// RUnlock with a background context, like sync.RWMutex's RLocker. Like
// Locker, it panics on an error.
func (rw *RWMutex) RLocker() sync.Locker { return locker{rw.RLock, rw.RUnlock} }

type locker struct{ lock, unlock func(context.Context) error }

func (l locker) Lock() {
	if err := l.lock(context.Background()); err != nil {
		panic("rwlock: Locker: " + err.Error())
	}
}

func (l locker) Unlock() {
	if err := l.unlock(context.Background()); err != nil {
		panic("rwlock: Locker: " + err.Error())
	}
}
