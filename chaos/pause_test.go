package chaos

import (
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

// TestServerPauseShorterThanLease: A holds a lock with a 1.5s watchdog
// lease and B waits for it while the server is stopped (SIGSTOP) for
// 500ms. A keeps its hold (a stalled renewal is a failure only at the
// deadline), B does not get the lock until A unlocks, and then within a
// second.
func TestServerPauseShorterThanLease(t *testing.T) {
	const lease = 1500 * time.Millisecond
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			s := redistest.StartServer(t)
			r := newReport(t)
			ho := startHandover(t, r, k, newClient(t, s.Addr()), newClient(t, s.Addr()), lease, 20*time.Second)
			s.Pause(lease / 3)
			r.Fault()
			if ho.aLost(2 * lease) {
				r.Violation("%s: A lost its hold (%v) over a pause of a third of its lease", k.name, ho.a.Err())
			}
			if ho.bGotIt() {
				r.Violation("%s: B got the lock while A held it", k.name)
			}
			unlocked := time.Now()
			if err := ho.unlockA(); err != nil {
				r.Violation("%s: A's Unlock after the pause: %v", k.name, err)
			}
			if after, err := ho.waitB(unlocked); err != nil || after > time.Second {
				r.Violation("%s: B's Lock returned %v, %v after A's unlock; want nil within 1s", k.name, err, after)
			}
		})
	}
}

// TestServerPauseLongerThanLease: the server is stopped for 3s while A
// holds with a 1s lease. The server expires A's lock as it wakes, so A
// must be told of its loss by its own deadline (within the pause) and
// before B gets the lock; A's Unlock must return ErrNotHeld; B must get
// the lock within its bound.
func TestServerPauseLongerThanLease(t *testing.T) {
	const lease, pause = time.Second, 3 * time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			s := redistest.StartServer(t)
			r := newReport(t)
			ho := startHandover(t, r, k, newClient(t, s.Addr()), newClient(t, s.Addr()), lease, 20*time.Second)
			stopped := time.Now()
			s.Pause(pause)
			r.Fault()
			if !ho.aLost(lease + 500*time.Millisecond) {
				r.Violation("%s: A was not told of its loss within %v of a server stop longer than its lease", k.name, lease+500*time.Millisecond)
			}
			after, err := ho.waitB(stopped)
			if err != nil {
				r.Violation("%s: B's Lock, with %v of budget, failed during the stop instead of waiting: %v", k.name, 20*time.Second, err)
			} else if bound := pause + lease + backstop; after > bound {
				r.Violation("%s: B got the lock %v after the stop, bound %v", k.name, after, bound)
			}
			if err := ho.unlockA(); !notHeld(err) {
				r.Violation("%s: A's Unlock after losing its hold returned %v, want ErrNotHeld", k.name, err)
			}
		})
	}
}
