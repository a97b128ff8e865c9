package rwlock

import (
	"sync"

	holdbook "github.com/latchkey/latchkey/internal/hold"
)

// Locker returns a sync.Locker whose Lock and Unlock call rw's Lock and
// Unlock with a background context, for code written against sync.Locker
// (sync.Cond, for one). It has sync.RWMutex's contract: Lock blocks until
// acquired, and an Unlock of a write lock that the handle does not hold
// panics, as does any Redis error, since sync.Locker has no way to return
// one.
func (rw *RWMutex) Locker() sync.Locker { return holdbook.Locker("rwlock", rw.Lock, rw.Unlock) }

// RLocker returns a sync.Locker whose Lock and Unlock call rw's RLock and
// RUnlock with a background context, like sync.RWMutex's RLocker. Like
// Locker, it panics on an error.
func (rw *RWMutex) RLocker() sync.Locker { return holdbook.Locker("rwlock", rw.RLock, rw.RUnlock) }
