package mutex

import (
	"sync"

	"github.com/latchkey/latchkey/internal/hold"
)

// Locker returns a sync.Locker whose Lock and Unlock call m's with a
// background context, for code written against sync.Locker (sync.Cond, for
// one). It has sync.Mutex's contract: Lock blocks until acquired, and an
// Unlock of a lock that the handle does not hold panics, as does any Redis
// error, since sync.Locker has no way to return one.
func (m *Mutex) Locker() sync.Locker { return hold.Locker("mutex", m.Lock, m.Unlock) }
