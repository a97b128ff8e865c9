package chaos

import (
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
)

// TestT17RestartWithoutPersistence: A holds a lock (1s watchdog lease), B
// waits for it, and the server is killed with SIGKILL and restarted
// empty. A must be told of its loss within the lease plus a second of the
// crash; A's Unlock must return ErrNotHeld; B must get the lock within
// its bound of the restart. B may get the lock before A is told: the wipe
// frees it on the server at once, which no client can prevent (the ops
// answer is persistence, or a restart delayed past the longest lease), so
// that is logged, with what the wipe does to fencing tokens.
func TestT17RestartWithoutPersistence(t *testing.T) {
	const lease = time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			s := redistest.StartServer(t)
			r := newReport(t)
			ho := startHandoverChecked(t, r, k, newClient(t, s.Addr()), newClient(t, s.Addr()), lease, 20*time.Second, false)
			crash := time.Now()
			s.Kill()
			s.Restart(t)
			r.Fault()
			if !ho.aLost(lease + time.Second) {
				r.Violation("%s: A was not told of its loss within %v of a crash that wiped the data", k.name, lease+time.Second)
			} else {
				r.Told(ho.aTold.Sub(crash))
			}
			if err := ho.unlockA(); !notHeld(err) {
				r.Violation("%s: A's Unlock after the wipe returned %v, want ErrNotHeld", k.name, err)
			}
			after, err := ho.waitB(crash)
			if err != nil {
				r.Violation("%s: B did not get the lock after the restart: %v", k.name, err)
			} else if bound := lease + backstop + 2*time.Second; after > bound {
				r.Violation("%s: B got the lock %v after the crash, bound %v", k.name, after, bound)
			}
			t.Logf("after the crash: B got the lock after %v, A was told after %v", after, ho.aTold.Sub(crash))
			if ho.tokenA != 0 {
				t.Logf("fencing tokens across the wipe: A had %d, B got %d", ho.tokenA, ho.tokenB)
			}
		})
	}
}

// TestT17RestartWithPersistence: the same with a server that syncs every
// write to its append-only file and a 3s lease: the crash and restart
// must not cost A its hold (its renewals resume), B must not get the lock
// until A unlocks, A's Unlock must succeed, B must then get it within a
// second, with a higher fencing token.
func TestT17RestartWithPersistence(t *testing.T) {
	const lease = 3 * time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			s := redistest.StartDurableServer(t)
			r := newReport(t)
			ho := startHandover(t, r, k, newClient(t, s.Addr()), newClient(t, s.Addr()), lease, 20*time.Second)
			s.CrashRestart(t)
			r.Fault()
			if ho.aLost(2 * lease) {
				r.Violation("%s: A lost its hold (%v) across a crash and restart that kept the data", k.name, ho.a.Err())
			}
			if ho.bGotIt() {
				r.Violation("%s: B got the lock while A held it across the restart", k.name)
			}
			unlocked := time.Now()
			if err := ho.unlockA(); err != nil {
				r.Violation("%s: A's Unlock after the restart: %v", k.name, err)
			}
			after, err := ho.waitB(unlocked)
			switch {
			case err != nil:
				r.Violation("%s: B did not get the lock after A's unlock: %v", k.name, err)
			case after > time.Second:
				r.Violation("%s: B got the lock %v after A's unlock, want within 1s", k.name, after)
			case ho.tokenA != 0 && ho.tokenB <= ho.tokenA:
				r.Violation("%s: B's token %d is not above A's %d after a restart that kept the data", k.name, ho.tokenB, ho.tokenA)
			}
		})
	}
}
