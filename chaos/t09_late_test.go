package chaos

import (
	"context"
	"testing"
	"time"
)

// TestT09StaleGrant: A's Lock is applied on the server but its replies are
// lost for longer than the lease, so the grant expires unrenewed (A does
// not know it holds) and B takes the lock; then the faults heal. A's Lock
// must not then report the expired grant as a live hold: it may keep
// waiting, fail, or return with A already told of the loss, but never
// leave A and B both holding with neither told. 3 trials per lock.
func TestT09StaleGrant(t *testing.T) {
	const lease = time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			e := newStandalone(t, 1)
			r := newReport(t)
			other := newClient(t, e.Server.Addr())
			for i := range lostReplyTrials {
				nm := name(t, i)
				h := newHistory()
				hs := newHolders(r, h, 0)
				a, tokA := k.open(e.Clients[0], nm, lease)
				b, tokB := k.open(other, nm, lease)
				warm, _ := k.open(e.Clients[0], nm+":warm", lease)
				if err := warm.Lock(t.Context()); err != nil { // sets up A's connections
					t.Fatal(err)
				}
				heal := e.Proxies[0].Blackhole("downstream")
				r.Fault()
				aDone := make(chan error, 1)
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					aDone <- a.Lock(ctx)
				}()
				time.Sleep(lease + 300*time.Millisecond)
				if ok, err := b.(tryLocker).TryLock(t.Context(), time.Second); err != nil || !ok {
					t.Logf("trial %d: B could not take the lock while A's replies were lost (%v, %v)", i, ok, err)
					heal()
					<-aDone
					continue
				}
				hs.Begin(nm, hold{client: 1, write: true, token: tokenOf(tokB), done: b.Done()})
				heal()
				if err := <-aDone; err == nil {
					hs.Begin(nm, hold{client: 0, write: true, token: tokenOf(tokA), done: a.Done()})
					t.Logf("trial %d: A's Lock returned nil after the heal; A told of its loss: %v", i, isClosed(a.Done()))
					_ = a.Unlock(t.Context())
				} else {
					t.Logf("trial %d: A's Lock returned %v", i, err)
				}
				_ = b.Unlock(t.Context())
				_ = warm.Unlock(t.Context())
			}
		})
	}
}

// A tryLocker is a Locker with TryLock, as every lock of lockKinds is.
type tryLocker interface {
	TryLock(ctx context.Context, wait time.Duration) (bool, error)
}
