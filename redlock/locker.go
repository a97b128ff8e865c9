package redlock

import (
	"sync"

	holdbook "github.com/latchkey/latchkey/internal/hold"
)

// Locker returns a sync.Locker whose Lock and Unlock call m's with a
// background context, for code written against sync.Locker. It has
// sync.Mutex's contract: Lock blocks until acquired, and an Unlock of a
// lock that the handle does not hold panics, as does any Redis error or
// missing quorum, since sync.Locker has no way to return one.
func (m *Mutex) Locker() sync.Locker { return holdbook.Locker("redlock", m.Lock, m.Unlock) }
