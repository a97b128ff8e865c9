package fairlock

// Done returns a channel that is closed when the current hold of m ends,
// by Unlock or by loss; Err then tells which. If m is not held, Done returns
// the channel of the last hold, or a closed channel if there was none.
func (m *Mutex) Done() <-chan struct{} { return m.holds.Done() }

// Err returns nil while m is held and after its last hold was released by
// Unlock. After a hold ended without Unlock (its lease expired, the key was
// deleted or force-unlocked, the watchdog could not renew it) Err returns an
// error matching latchkey.ErrLost that says why.
func (m *Mutex) Err() error { return m.holds.Err() }
