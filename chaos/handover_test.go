package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// A lockKind opens a lock of one primitive for the hand-over tests.
type lockKind struct {
	name string
	open func(c redis.UniversalClient, name string, lease time.Duration) (l Locker, token func() int64)
}

var lockKinds = []lockKind{
	{"mutex", func(c redis.UniversalClient, name string, lease time.Duration) (Locker, func() int64) {
		m := mutex.New(c, name, mutex.WithWatchdogTimeout(lease))
		return m, m.Token
	}},
	{"fairlock", func(c redis.UniversalClient, name string, lease time.Duration) (Locker, func() int64) {
		return fairlock.New(c, name, fairlock.WithWatchdogTimeout(lease)), nil
	}},
	{"rwlock", func(c redis.UniversalClient, name string, lease time.Duration) (Locker, func() int64) {
		return rwlock.New(c, name, rwlock.WithWatchdogTimeout(lease)).WriteLock(), nil
	}},
}

// A handover is a holder A and a waiter B of one lock around a fault: A
// takes the lock, B starts waiting for it, the fault goes in, and the test
// then checks how the hold passes from A to B. Both go through Holders.
type handover struct {
	t       *testing.T
	r       *Report
	h       *History
	holders *Holders
	name    string
	a, b    Locker
	tokA    func() int64
	tokB    func() int64

	// unchecked leaves B's grant out of Holders: a fault that wipes the
	// data lets B in before A can be told, which no library can prevent.
	unchecked bool

	bDone  chan error // B's Lock result
	bAt    time.Time  // when B's Lock returned
	aTold  time.Time  // when A saw its Done closed
	tokenA int64
	tokenB int64
}

// startHandover makes A take the lock and B wait for it (for up to
// waitB), A and B each opened on its own client.
func startHandover(t *testing.T, r *Report, k lockKind, ca, cb redis.UniversalClient, lease, waitB time.Duration) *handover {
	return startHandoverChecked(t, r, k, ca, cb, lease, waitB, true)
}

// startHandoverChecked is startHandover, checking B's grant against A's
// hold only if checked.
func startHandoverChecked(t *testing.T, r *Report, k lockKind, ca, cb redis.UniversalClient, lease, waitB time.Duration, checked bool) *handover {
	h := newHistory()
	ho := &handover{t: t, r: r, h: h, holders: newHolders(r, h, 0), name: name(t, 0), bDone: make(chan error, 1), unchecked: !checked}
	ho.a, ho.tokA = k.open(ca, ho.name, lease)
	ho.b, ho.tokB = k.open(cb, ho.name, lease)
	if err := ho.a.Lock(t.Context()); err != nil {
		t.Fatalf("A: Lock: %v", err)
	}
	ho.tokenA = tokenOf(ho.tokA)
	ho.holders.Begin(ho.name, hold{client: 0, write: true, token: ho.tokenA, done: ho.a.Done()})
	r.Acquired(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitB)
		defer cancel()
		err := ho.b.Lock(ctx)
		ho.bAt = time.Now()
		if err == nil {
			ho.tokenB = tokenOf(ho.tokB)
			if ho.unchecked {
				ho.holders.End(ho.name, 0)
			}
			ho.holders.Begin(ho.name, hold{client: 1, write: true, token: ho.tokenB, done: ho.b.Done()})
			r.Acquired(1)
		}
		ho.bDone <- err
	}()
	time.Sleep(100 * time.Millisecond) // B is waiting
	return ho
}

func tokenOf(f func() int64) int64 {
	if f == nil {
		return 0
	}
	return f()
}

// aLost waits up to bound for A's Done to close, and reports whether it did.
func (ho *handover) aLost(bound time.Duration) bool {
	select {
	case <-ho.a.Done():
		ho.r.Lost()
		ho.aTold = time.Now()
		return true
	case <-time.After(bound):
		return false
	}
}

// unlockA releases A's hold (ending it in Holders first) and returns the
// error of its Unlock.
func (ho *handover) unlockA() error {
	ho.holders.End(ho.name, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return ho.a.Unlock(ctx)
}

// waitB waits for B's Lock to return, and returns its error and how long
// after since it returned: that duration and the error.
func (ho *handover) waitB(since time.Time) (time.Duration, error) {
	err := <-ho.bDone
	if err == nil {
		ho.holders.End(ho.name, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ho.b.Unlock(ctx)
	}
	return ho.bAt.Sub(since), err
}

// bGotIt reports whether B's Lock has returned nil by now, without
// waiting.
func (ho *handover) bGotIt() bool {
	select {
	case err := <-ho.bDone:
		ho.bDone <- err
		return err == nil
	default:
		return false
	}
}

// notHeld reports whether err says the lock was not held.
func notHeld(err error) bool { return errors.Is(err, latchkey.ErrNotHeld) }
