package permitsemaphore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/redis/go-redis/v9"
)

func queueKey(name string) string { return "latchkey_semaphore_queue:{" + name + "}" }

// waitQueue waits until the queue of the semaphore name holds n waiters.
func waitQueue(t *testing.T, c *redis.Client, name string, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.LLen(context.Background(), queueKey(name)).Val() != n; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s holds %d waiters, want %d", name, c.LLen(context.Background(), queueKey(name)).Val(), n)
		}
	}
}

// letters collects the kinds of the letters written to every Hub's channel
// of the semaphore name: "<n>" a grant of n permits, "next" a head told.
func letters(t *testing.T, raw *redis.Client, name string) <-chan string {
	t.Helper()
	ctx := context.Background()
	sub := raw.PSubscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:*")
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	go func() {
		for m := range sub.Channel() {
			if f := strings.Fields(m.Payload); len(f) >= 2 {
				out <- f[1]
			}
		}
	}()
	return out
}

// expectLetters checks that the letters arriving within 100ms are want.
func expectLetters(t *testing.T, got <-chan string, want ...string) {
	t.Helper()
	var kinds []string
	for quiet := time.After(100 * time.Millisecond); ; {
		select {
		case k := <-got:
			kinds = append(kinds, k)
			continue
		case <-quiet:
		}
		break
	}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("letters %q, want %q", kinds, want)
	}
}

// Waiters of many clients are served in order, and only those a release
// satisfies are told: a waiter for 2 at the head blocks a waiter for 1
// behind it, which sends no command while the head cannot be served. A
// granted waiter returns after one command of its own, the take that
// confirms the grant, and its permits then have the lease its Acquire
// asked for, not the grace.
func TestGrant_inOrder(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := semName(t)
	raw := s.Client(t)
	mail := letters(t, raw, name)
	holder := permitsemaphore.New(client(t, s), name)
	if err := holder.SetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	held, err := holder.AcquireN(ctx, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var headSent, behindSent locktest.Commands
	hc, bc := client(t, s), client(t, s)
	hc.AddHook(&headSent)
	bc.AddHook(&behindSent)
	const lease = permitsemaphore.Lease(time.Minute)
	type result struct {
		ps  []*permitsemaphore.Permit
		err error
	}
	head, behind := make(chan result, 1), make(chan result, 1)
	headSem := permitsemaphore.New(hc, name)
	go func() { ps, err := headSem.AcquireN(ctx, 2, lease); head <- result{ps, err} }()
	waitQueue(t, raw, name, 1)
	go func() { ps, err := permitsemaphore.New(bc, name).AcquireN(ctx, 1, lease); behind <- result{ps, err} }()
	waitQueue(t, raw, name, 2)
	time.Sleep(20 * time.Millisecond) // both asleep
	before := behindSent.N()
	if err := holder.Release(ctx, held[0].ID()); err != nil {
		t.Fatal(err)
	}
	expectLetters(t, mail) // none: the head needs 2
	select {
	case r := <-behind:
		t.Fatalf("the waiter for 1 overtook the waiter for 2: %v", r.err)
	default:
	}
	if n := behindSent.N() - before; n != 0 {
		t.Errorf("the waiter behind the head sent %d commands on a release the head could not use, want 0", n)
	}
	headBefore := headSent.N()
	if err := holder.Release(ctx, held[1].ID()); err != nil {
		t.Fatal(err)
	}
	r := <-head
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := headSent.N() - headBefore; n != 1 {
		t.Errorf("the granted waiter sent %d commands before AcquireN returned, want 1 (its take)", n)
	}
	expectLetters(t, mail, "2", "next")
	if d, err := headSem.LeaseTime(ctx, r.ps[0].ID()); err != nil || d < time.Duration(lease)-time.Second {
		t.Errorf("LeaseTime of a granted permit = %v, %v; want about %v", d, err, time.Duration(lease))
	}
	if err := r.ps[1].Extend(ctx, permitsemaphore.Forever); err != nil {
		t.Fatal(err)
	}
	time.Sleep(handoff.Grace + 50*time.Millisecond) // past the grace
	if d, err := headSem.LeaseTime(ctx, r.ps[1].ID()); err != nil || d != -1 {
		t.Errorf("LeaseTime of a permit made permanent right after its grant = %v, %v; want -1", d, err)
	}
	if err := headSem.ReleaseAll(ctx, r.ps[0].ID(), r.ps[1].ID()); err != nil {
		t.Fatal(err)
	}
	if r = <-behind; r.err != nil {
		t.Fatal(r.err)
	}
	if av, ac := must2(holder.AvailablePermits(ctx)), must2(holder.AcquiredPermits(ctx)); av != 1 || ac != 1 {
		t.Errorf("available %d, acquired %d; want 1, 1", av, ac)
	}
}

// A grant whose letter is heard but never read (its waiter left without a
// word, its client still listening) costs the grace: the granted permit's
// lease is the grace, and the next waiter, told that it is next, gets the
// permit when it expires.
func TestGrant_unreadLetter(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := semName(t)
	raw := s.Client(t)
	listener := s.Client(t)
	sub := listener.Subscribe(ctx, "latchkey_semaphore__channel:{"+name+"}:gone")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	holder := permitsemaphore.New(client(t, s), name)
	if err := holder.SetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := holder.Acquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	goneID := strings.Repeat("ab", 16)
	gone := "gone/" + goneID
	raw.RPush(ctx, queueKey(name), gone)
	raw.ZAdd(ctx, "latchkey_semaphore_timeout:{"+name+"}", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: gone})
	next := permitsemaphore.New(client(t, s), name)
	done := make(chan time.Time, 1)
	go func() {
		if p, err := next.Acquire(ctx, permitsemaphore.Lease(time.Minute)); err == nil {
			at := time.Now()
			if p.Release(ctx) == nil {
				done <- at
			}
		}
		close(done)
	}()
	waitQueue(t, raw, name, 2)
	time.Sleep(20 * time.Millisecond)
	released := time.Now()
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || !strings.HasPrefix(msg.Payload, "@"+goneID+" 1 ") {
		t.Fatalf("letter to the gone waiter = %v, %v", msg, err)
	}
	select {
	case at, ok := <-done:
		if !ok {
			t.Fatal("the next waiter's Acquire failed")
		}
		d := at.Sub(released)
		t.Logf("the next waiter acquired %v after the release granted the permit to a waiter that never read its letter", d)
		if d < handoff.Grace-10*time.Millisecond || d > handoff.Grace+2*time.Second {
			t.Errorf("the next waiter acquired %v after the release, want about the grace (%v)", d, handoff.Grace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never acquired")
	}
	if av := must2(holder.AvailablePermits(ctx)); av != 1 {
		t.Errorf("available at the end = %d, want 1", av)
	}
}
