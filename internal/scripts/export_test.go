package scripts

import "github.com/redis/go-redis/v9"

// Compose makes a script from a test's own Lua, as the embedded ones are.
var Compose = compose

// ReplicaRecheck is how old a replica count grows before a write reads it
// again.
const ReplicaRecheck = replicaRecheck

// KeepRecords keeps client's request records to their TTL, as if go-redis
// could resend at once: for tests that send one request twice to stand
// for a resend.
func KeepRecords(c redis.UniversalClient) {
	b := records.Get(c)
	b.mu.Lock()
	b.single = 0
	b.mu.Unlock()
}
