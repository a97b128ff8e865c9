package rwlock

import (
	"context"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/owner"
	"github.com/latchkey/latchkey/internal/scripts"
)

// Writer preference. A latchkey writer that must wait writes an entry with
// a deadline into the writers' marker, latchkey_rwlock_writers:{name}, a
// sorted set beside Redisson's keys; while an entry lives, new latchkey
// readers wait too, so a steady stream of readers cannot starve writers.
// Redisson clients ignore the marker. Nor can writers starve readers: a
// reader held back (by a waiting writer or a writing one) learns the epoch,
// latchkey_rwlock_epoch:{name}, and a write release while readers are held
// back starts a new one, so that a reader held back before it enters even
// if another writer waits by then, as sync.RWMutex lets the readers that a
// writer's Unlock releases in before the next writer.
//
// Wake-ups. Every waiter listens on Redisson's channel. A read release that
// frees the lock publishes "0", which wakes one waiter per Hub: a reader
// declares a need of two units (see notify.Want.Need), so that the
// "0" goes to a writer of the Hub, the waiter it can let in, rather than to
// a reader that a waiting writer holds back. A write release publishes
// "1", which wakes every waiter, so that the readers it held back enter
// together. A writer that gives up withdraws its entry, and when none is
// left, it publishes "1" too.

// writerLife is how long a waiting writer's entry in the marker lives
// unless it attempts again: what a writer that died while waiting costs the
// readers it held back, at most. A waiting writer attempts at least every
// third of it (see marking.bound).
const writerLife = time.Second

// epochLife is how long the epoch lives after a reader was last held back.
// A held-back reader attempts again at least every wait.Backstop, keeping
// it; one that finds it gone (and so a new epoch) enters.
const epochLife = 30 * time.Second

// A marking is one write call's entry in the writers' marker.
type marking struct {
	entry string
	life  time.Duration // 0: a single try, which leaves no entry
	sent  bool          // an attempt that may have written the entry was sent
}

// newMarking returns the marking of a write call with the given budget: a
// single try (budget 0) leaves no entry.
func newMarking(budget time.Duration) *marking {
	m := &marking{entry: owner.New()}
	if budget != 0 {
		m.life = writerLife
	}
	return m
}

// bound returns how long a refused attempt may sleep, given retry, what the
// script answered: a writer's next attempt comes soon enough to keep its
// entry alive. A reader's (m nil) is retry itself.
func (m *marking) bound(retry time.Duration) time.Duration {
	if m == nil || m.life == 0 {
		return retry
	}
	if retry < 0 || retry > m.life/3 {
		return m.life / 3
	}
	return retry
}

// withdraw takes the entry of a writer that gave up out of the marker, and
// wakes the readers it held back if it was the last. A failure leaves the
// entry to its deadline.
func (rw *RWMutex) withdraw(ctx context.Context, snd rt.Sender, entry string) error {
	_, err := snd.Resend(ctx, scripts.RWWriteWithdraw{Lock: rw.layout, Entry: entry}.Request())
	return err
}

// need is what a waiter on side s declares to its Hub: see the wake-ups
// above.
func need(s side) int {
	if s == read {
		return 2
	}
	return 1
}
