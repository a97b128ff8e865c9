package process

import "time"

// SetTiming makes the writers made from now on write records with a TTL
// of ttl every every, for tests that watch a record refreshed, and returns
// a function that restores the defaults.
func SetTiming(ttl, every time.Duration) (restore func()) {
	timing.Lock()
	timing.ttl, timing.every = ttl, every
	timing.Unlock()
	return func() { SetTiming(TTL, Refresh) }
}
