package chaos

import (
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// openRWLock opens an rwlock.RWMutex with the watchdog timeout lease.
func openRWLock(c *redis.Client, name string, lease time.Duration) (Locker, Locker, func() int64) {
	rw := rwlock.New(c, name, rwlock.WithWatchdogTimeout(lease))
	return rw.WriteLock(), rw.ReadLock(), nil
}

// openFairLock opens a fairlock.Mutex with the watchdog timeout lease.
func openFairLock(c *redis.Client, name string, lease time.Duration) (Locker, Locker, func() int64) {
	return fairlock.New(c, name, fairlock.WithWatchdogTimeout(lease)), nil, nil
}

// TestT14RWLockInvariants: 12 clients on 3 read-write locks, each cycle a
// read lock (70%) or a write lock, under lighter T02 faults (one every
// 400ms, network faults up to 1.5s). Never two writers, never a reader and
// a writer, unless the earlier holder was told of its loss; every client
// gets the write lock within its bound once the faults heal; the history
// is linearizable with the read-write lock model.
func TestT14RWLockInvariants(t *testing.T) {
	lockSoak{
		names: 3, perName: 4,
		lease:     time.Second,
		duration:  25 * time.Second,
		every:     400 * time.Millisecond,
		longest:   1500 * time.Millisecond,
		readShare: 0.7,
		model:     rwModel,
		open:      openRWLock,
	}.run(t)
}

// TestT02FairLockNetworkChaos is T02 on the fair lock: 12 clients on 4
// names, the same faults, the same checks (without fencing tokens, which
// the fair lock does not give).
func TestT02FairLockNetworkChaos(t *testing.T) {
	lockSoak{
		names: 4, perName: 3,
		lease:    time.Second,
		duration: 20 * time.Second,
		every:    200 * time.Millisecond,
		longest:  3 * time.Second,
		model:    mutexModel,
		open:     openFairLock,
	}.run(t)
}
