package rt

import (
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/redis/go-redis/v9"
)

// ReplicaRecheck is how old a replica count grows before a write reads it
// again.
const ReplicaRecheck = replicaRecheck

// DropDelay is how long a record's lane waits idle, at least, before it
// goes.
const DropDelay = dropDelay

// KeepRecords keeps client's request records to their TTL, as if go-redis
// could resend at once: for tests that send one request twice to stand
// for a resend.
func KeepRecords(c redis.UniversalClient) {
	b := Of(c).records
	b.mu.Lock()
	b.single = 0
	b.mu.Unlock()
}

// SetTiming makes the writers made from now on write records with a TTL
// of ttl every every, for tests that watch a record refreshed, and returns
// a function that restores the defaults.
func SetTiming(ttl, every time.Duration) (restore func()) {
	timing.Lock()
	timing.ttl, timing.every = ttl, every
	timing.Unlock()
	return func() { SetTiming(keys.ProcessTTL, keys.ProcessRefresh) }
}
