package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/redistest"
)

// Renewals that keep failing back off instead of spinning: over a 2s
// outage, a hold with a 6s lease is retried a handful of times, not
// thousands.
func TestScheduler_errorsBackOff(t *testing.T) {
	const d = 6 * time.Second
	c := client(t, redistest.SharedServer(t))
	var calls scriptCalls
	c.AddHook(&calls)
	h, l := lock(t, c, keyName(t, 0), d)
	calls.failWith(errors.New("connection refused (injected)"))
	schedFor(c).Add(h, time.Now().Add(-d/3)) // due at once
	time.Sleep(2 * time.Second)
	failed := calls.calls.Load()
	calls.failWith(nil)
	// 20ms doubling to the 600ms cap: about 7 tries in 2s.
	if failed < 3 || failed > 20 {
		t.Fatalf("%d renewal calls during a 2s outage, want a handful backing off", failed)
	}
	time.Sleep(time.Second)
	if errs := l.calls(); len(errs) != 0 {
		t.Fatalf("Lost called after a 2s outage with a %v lease: %v", d, errs)
	}
	if ttl := c.PTTL(context.Background(), keyName(t, 0)).Val(); ttl < d-2*time.Second {
		t.Fatalf("PTTL = %v after the outage: not renewed once it healed", ttl)
	}
}

// A key that another primitive took (now of another type) ends its own hold
// at the next renewal, and only that one: the holds renewed in the same
// batch carry on.
func TestScheduler_wrongTypeIsLossOfThatHoldOnly(t *testing.T) {
	const d = 900 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	ctx := context.Background()
	var holds []*lease.Hold
	var losts []*lost
	for i := range 4 {
		h, l := lock(t, c, keyName(t, i), d)
		holds, losts = append(holds, h), append(losts, l)
	}
	acquired := time.Now()
	for _, h := range holds {
		schedFor(c).Add(h, acquired)
	}
	if err := c.Del(ctx, keyName(t, 2)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, keyName(t, 2), "a string now", 0).Err(); err != nil {
		t.Fatal(err)
	}
	at := losts[2].wait(t, d+slack)
	if late := at.Sub(acquired); late >= d {
		t.Errorf("the wrong-typed hold was declared lost %v after acquiring: retried as transient until its %v lease ran out", late, d)
	}
	if errs := losts[2].calls(); len(errs) != 1 || !errors.Is(errs[0], lockerr.ErrLost) {
		t.Fatalf("Lost called with %v, want once with ErrLost", errs)
	}
	time.Sleep(2 * d)
	for i, l := range losts {
		if i != 2 && len(l.calls()) != 0 {
			t.Errorf("hold %d, renewed in the same batch, was declared lost: %v", i, l.calls())
		}
	}
}
