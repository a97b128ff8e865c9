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

// A hold found gone on the server is told so at once, and told again, with
// ErrExpired, when its validity ends, unless it was removed first: its
// holder may hold the first back while its own release is on its way (the
// loss may be that release), never past the validity.
func TestScheduler_goneToldAgainAtValidity(t *testing.T) {
	const d = 600 * time.Millisecond
	c := client(t, redistest.SharedServer(t))
	s := schedFor(c)
	kept, lKept := lock(t, c, keyName(t, 0), d)
	removed, lRemoved := lock(t, c, keyName(t, 1), d)
	start := time.Now()
	s.Add(kept, start)
	s.Add(removed, start)
	c.Del(context.Background(), keyName(t, 0), keyName(t, 1))
	lKept.wait(t, d/3+slack)
	lRemoved.wait(t, d/3+slack)
	s.Remove(removed)
	valid := s.Valid(kept)
	deadline := time.Now().Add(d + slack)
	for len(lKept.calls()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	errs := lKept.calls()
	if len(errs) != 2 || errors.Is(errs[0], lease.ErrExpired) || !errors.Is(errs[1], lease.ErrExpired) {
		t.Fatalf("the hold found gone was told %v, want its loss, then ErrExpired", errs)
	}
	if at := lKept.last(); at.Before(valid) {
		t.Errorf("told ErrExpired %v before its validity ended", valid.Sub(at))
	}
	time.Sleep(d) // past the removed hold's validity
	if errs := lRemoved.calls(); len(errs) != 1 {
		t.Errorf("the hold removed after its loss was told %v, want its loss alone", errs)
	}
}
