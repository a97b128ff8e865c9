package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// A semaphore whose holders crashed: none available, a latchkey waiter
// queued and a Redisson waiter listening. release -n gives permits back
// and wakes both, as a holder's release would.
func testRelease(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "sem")
	s := semaphore.New(rdb, name)
	if _, err := s.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 3); err != nil { // by holders that die
		t.Fatal(err)
	}
	if _, _, code := c.run(t, "release", "-yes", "-n", "1", name); code != exitRefused {
		t.Errorf("release of a plain integer without -kind: exit %d, want %d (refused)", code, exitRefused)
	}
	sub := rdb.Subscribe(ctx, namesOf(name).sem.Channel) // a Java client's wait
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	w := wait(func(ctx context.Context) error { return s.Acquire(ctx, 1) }, func(ctx context.Context) error { return s.Release(ctx, 1) })
	defer w.stop()
	queued(t, rdb, namesOf(name).sem.Queue, 1)
	if _, _, code := c.run(t, "give", "-n", "2", name); code != exitNotConfirmed {
		t.Errorf("give without -yes: exit %d, want %d", code, exitNotConfirmed)
	}
	out, errOut, code := c.run(t, "release", "-yes", "-n", "2", name)
	if code != 0 || !strings.Contains(out, "released 2 permits (available before: 0, queued: 1)") {
		t.Fatalf("release -n 2: exit %d: %s%s", code, out, errOut)
	}
	got(t, w, "the latchkey waiter", time.Second)
	select {
	case <-sub.Channel():
	case <-time.After(soon):
		t.Error("nothing was published on Redisson's channel")
	}
	if st := c.inspect(t, name, "-kind", "semaphore"); st.Permits == nil || *st.Permits != 1 {
		t.Errorf("after giving 2 back to a waiter for 1: %+v", st)
	}

	// A permit semaphore's permit, released by its id.
	pes := testName(t, "pes")
	ps := permitsemaphore.New(rdb, pes)
	if _, err := ps.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p, err := ps.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pw := wait(func(ctx context.Context) error {
		_, err := ps.Acquire(ctx, permitsemaphore.Lease(time.Minute))
		return err
	}, func(context.Context) error { return nil })
	defer pw.stop()
	queued(t, rdb, namesOf(pes).sem.Queue, 1)
	if out, errOut, code := c.run(t, "release", "-yes", "-id", p.ID(), pes); code != 0 {
		t.Fatalf("release -id: exit %d: %s%s", code, out, errOut)
	}
	got(t, pw, "the permit semaphore's waiter", time.Second)
	if _, _, code := c.run(t, "release", "-yes", "-id", p.ID(), pes); code != exitNothing {
		t.Errorf("release of a permit released already: exit %d, want %d", code, exitNothing)
	}
}
