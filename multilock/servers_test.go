package multilock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// members returns one mutex per server, each named for t and its index,
// through new clients of the servers (a separate process's view).
func members(t *testing.T, ss []*redistest.Server, opts ...func(*redis.Options)) []*mutex.Mutex {
	ms := make([]*mutex.Mutex, len(ss))
	for i, s := range ss {
		c := s.Client(t, opts...)
		t.Cleanup(func() { _ = latchkey.Close(c) })
		ms[i] = mutex.New(c, lockName(t, i))
	}
	return ms
}

func lockers(ms []*mutex.Mutex, order ...int) []multilock.Member {
	ls := make([]multilock.Member, len(order))
	for k, i := range order {
		ls[k] = ms[i]
	}
	return ls
}

func locked(t *testing.T, ms []*mutex.Mutex) []bool {
	t.Helper()
	out := make([]bool, len(ms))
	for i, m := range ms {
		ok, err := m.IsLocked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[i] = ok
	}
	return out
}

// Members on 3 servers; one is held by another client: TryLock fails within
// its wait and holds nothing; once it is released, Lock (woken by its
// unlock message) takes all three.
func TestMultiLock_servers_memberHeldElsewhere(t *testing.T) {
	ss := redistest.StartServers(t, 3)
	ctx := context.Background()
	mine := members(t, ss)
	theirs := members(t, ss)
	if err := theirs[1].Lock(ctx); err != nil {
		t.Fatal(err)
	}
	m := multilock.New(lockers(mine, 0, 1, 2)...)
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		start := time.Now()
		if ok, err := m.TryLock(ctx, wait); ok || err != nil {
			t.Fatalf("TryLock(%v) = %v, %v; want false, nil", wait, ok, err)
		}
		if d := time.Since(start); d > wait+2*time.Second {
			t.Errorf("TryLock(%v) took %v", wait, d)
		}
		if got := locked(t, mine); !slices.Equal(got, []bool{false, true, false}) {
			t.Fatalf("after TryLock(%v): locked = %v, want only the other client's member", wait, got)
		}
	}

	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	time.Sleep(100 * time.Millisecond)
	if got := locked(t, mine); got[0] || got[2] {
		t.Fatalf("Lock holds %v while waiting for member 1", got)
	}
	released := time.Now()
	if err := theirs[1].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Lock returned %v after the member's unlock", time.Since(released))
	case <-time.After(10 * time.Second):
		t.Fatal("Lock still waiting 10s after the member was released")
	}
	if got := locked(t, mine); !slices.Equal(got, []bool{true, true, true}) {
		t.Fatalf("after Lock: locked = %v", got)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := locked(t, mine); !slices.Equal(got, []bool{false, false, false}) {
		t.Fatalf("after Unlock: locked = %v", got)
	}
}

// A member whose server is down: the acquisition fails naming it, and the
// members taken on the other servers are released.
func TestMultiLock_servers_memberDown(t *testing.T) {
	ss := redistest.StartServers(t, 3)
	ctx := context.Background()
	mine := members(t, ss, func(o *redis.Options) { o.MaxRetries = -1 })
	ss[2].Stop()
	m := multilock.New(lockers(mine, 0, 1, 2)...)
	_, err := m.TryLock(ctx, 0)
	if err == nil || errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("TryLock with member 2's server down = %v, want its Redis error", err)
	}
	t.Logf("error: %v", err)
	if got := locked(t, mine[:2]); got[0] || got[1] {
		t.Fatalf("members left held: %v", got)
	}
}

// Two clients take the same three members, on three servers, in opposite
// orders, over and over: both finish, never holding at the same time.
func TestMultiLock_servers_oppositeOrders(t *testing.T) {
	ss := redistest.StartServers(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	ms := []multilock.Member{
		multilock.New(lockers(members(t, ss), 0, 1, 2)...),
		multilock.New(lockers(members(t, ss), 2, 1, 0)...),
	}
	start := time.Now()
	overlaps, latencies, err := hammer(ctx, ms, 15, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Errorf("%d overlapping holds", overlaps)
	}
	t.Logf("%d acquisitions in %v; Lock latency median %v, max %v",
		len(latencies), time.Since(start), latencies[len(latencies)/2], latencies[len(latencies)-1])
}
