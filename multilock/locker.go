package multilock

import (
	"sync"

	"github.com/latchkey/latchkey/internal/hold"
)

// Locker returns a sync.Locker whose Lock and Unlock call m's with a
// background context, for code written against sync.Locker. It has
// sync.Mutex's contract: Lock blocks until every member is held, and an
// Unlock that fails on any member panics, as does any Redis error, since
// sync.Locker has no way to return one.
func (m *MultiLock) Locker() sync.Locker { return hold.Locker("multilock", m.Lock, m.Unlock) }
