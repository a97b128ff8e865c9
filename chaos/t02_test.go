package chaos

import (
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// openMutex opens a mutex.Mutex with the watchdog timeout lease.
func openMutex(c *redis.Client, name string, lease time.Duration) (Locker, Locker, func() int64) {
	m := mutex.New(c, name, mutex.WithWatchdogTimeout(lease))
	return m, nil, m.Token
}

// TestT02MutexNetworkChaos: 16 clients, 4 per lock name, each through its
// own proxy, lock and unlock for 40s while a fault goes in every 200ms:
// latency, blackholed requests or replies for up to 3s (longer than the 1s
// watchdog lease), reset connections, CLIENT KILL of normal and pub/sub
// connections, SCRIPT FLUSH, and SIGSTOP of the server for less than half
// a lease. No grant may overlap a hold whose owner was not told of its
// loss, tokens strictly increase, the fenced resource never rejects a
// holder that was not told, every client gets the lock within its bound
// once the faults heal, and the history is linearizable.
func TestT02MutexNetworkChaos(t *testing.T) {
	lockSoak{
		names: 8, perName: 2,
		lease:    time.Second,
		duration: 40 * time.Second,
		every:    200 * time.Millisecond,
		longest:  3 * time.Second,
		model:    mutexModel,
		open:     openMutex,
	}.run(t)
}
