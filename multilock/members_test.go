package multilock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// Every latchkey lock is a Member that reports the loss of its holds; the
// primitives do not import multilock.
var (
	_ multilock.LossReporter = (*mutex.Mutex)(nil)
	_ multilock.LossReporter = (*fairlock.Mutex)(nil)
	_ multilock.LossReporter = (*rwlock.ReadLock)(nil)
	_ multilock.LossReporter = (*rwlock.WriteLock)(nil)
	_ multilock.LossReporter = (*redlock.Mutex)(nil)
	_ multilock.LossReporter = (*multilock.MultiLock)(nil)
)

// One MultiLock over every kind of lock: a mutex, a fair lock, an rwlock's
// write side and a redlock; a second one that only needs the rwlock's read
// side is refused until the first lets go.
func TestMultiLock_everyPrimitive(t *testing.T) {
	_, c := redistest.Miniredis(t)
	_, d := redistest.Miniredis(t)
	ctx := context.Background()
	name := func(s string) string { return "multilock-test:" + t.Name() + ":" + s }
	rw := rwlock.New(c, name("rw"))
	all := multilock.New(
		mutex.New(c, name("mutex")),
		fairlock.New(d, name("fair")),
		rw.WriteLock(),
		redlock.New([]redis.UniversalClient{c, d}, name("red")),
	)
	if err := all.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	reader := multilock.New(mutex.New(d, name("other")), rwlock.New(c, name("rw")).ReadLock())
	if ok, err := reader.TryLock(ctx, 0); ok || err != nil {
		t.Fatalf("read side while the write side is held: TryLock = %v, %v; want false, nil", ok, err)
	}
	if err := all.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := reader.TryLock(ctx, 0); !ok || err != nil {
		t.Fatalf("read side after the Unlock: TryLock = %v, %v; want true, nil", ok, err)
	}
	if err := reader.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// renewal is the watchdog timeout of the members a test loses by deleting
// their key: a renewal every 300ms finds the key gone.
const renewal = 900 * time.Millisecond

// A member really lost on a redis-server, whatever its kind and however it
// is lost (its key deleted, or its lease run out), ends the MultiLock's
// hold naming it; the other member stays held until Unlock, which releases
// it and reports the lost one not held.
func TestMultiLock_servers_memberLost(t *testing.T) {
	type lossy struct {
		member multilock.Member
		label  string // how errors name it
		lose   func()
	}
	for _, tc := range []struct {
		name string
		make func(c, raw *redis.Client, name string) lossy
	}{
		{"mutex key deleted", func(c, raw *redis.Client, name string) lossy {
			return lossy{mutex.New(c, name, mutex.WithWatchdogTimeout(renewal)), strconv.Quote(name),
				func() { raw.Del(context.Background(), name) }}
		}},
		{"mutex lease", func(c, raw *redis.Client, name string) lossy {
			return lossy{mutex.New(c, name, mutex.WithLease(500*time.Millisecond)), strconv.Quote(name), func() {}}
		}},
		{"fairlock key deleted", func(c, raw *redis.Client, name string) lossy {
			return lossy{fairlock.New(c, name, fairlock.WithWatchdogTimeout(renewal)), strconv.Quote(name),
				func() { raw.Del(context.Background(), name) }}
		}},
		{"rwlock write side key deleted", func(c, raw *redis.Client, name string) lossy {
			return lossy{rwlock.New(c, name, rwlock.WithWatchdogTimeout(renewal)).WriteLock(), strconv.Quote(name),
				func() { raw.Del(context.Background(), name) }}
		}},
		{"rwlock read side key deleted", func(c, raw *redis.Client, name string) lossy {
			return lossy{rwlock.New(c, name, rwlock.WithWatchdogTimeout(renewal)).ReadLock(), strconv.Quote(name),
				func() { raw.Del(context.Background(), name) }}
		}},
		{"redlock lease", func(c, raw *redis.Client, name string) lossy {
			return lossy{redlock.New([]redis.UniversalClient{c}, name, redlock.WithLease(time.Second)), strconv.Quote(name), func() {}}
		}},
		{"nested multilock", func(c, raw *redis.Client, name string) lossy {
			inner := multilock.New(mutex.New(c, name, mutex.WithWatchdogTimeout(renewal)))
			return lossy{inner, "(*multilock.MultiLock): multilock: member 0 " + strconv.Quote(name),
				func() { raw.Del(context.Background(), name) }}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.SharedServer(t)
			c, raw := s.Client(t), s.Client(t)
			t.Cleanup(func() { _ = latchkey.Close(c) })
			ctx := context.Background()
			kept := mutex.New(c, lockName(t, 0))
			l := tc.make(c, raw, lockName(t, 1))
			m := multilock.New(kept, l.member)
			hctx, err := m.LockContext(ctx)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			l.lose()
			select {
			case <-m.Done():
				t.Logf("loss reported after %v", time.Since(start))
			case <-time.After(5 * time.Second):
				t.Fatal("Done not closed 5s after the member was lost")
			}
			want := "multilock: member 1 " + l.label + ": "
			err = m.Err()
			if !errors.Is(err, latchkey.ErrLost) || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("Err = %v, want ErrLost starting %q", err, want)
			}
			if !ended(hctx.Done()) || context.Cause(hctx) != err {
				t.Fatalf("LockContext's context: cause %v, want Err's %v", context.Cause(hctx), err)
			}
			if held, err := kept.IsLocked(ctx); !held || err != nil {
				t.Fatalf("the member not lost: IsLocked = %v, %v; want it held until Unlock", held, err)
			}
			err = m.Unlock(ctx)
			if !errors.Is(err, latchkey.ErrNotHeld) || !strings.HasPrefix(err.Error(), "multilock: unlock member 1 ") ||
				strings.Contains(err.Error(), strconv.Quote(kept.Name())) {
				t.Fatalf("Unlock after the loss = %v, want ErrNotHeld from member 1 alone", err)
			}
			if held, err := kept.IsLocked(ctx); held || err != nil {
				t.Fatalf("after Unlock, the member not lost: IsLocked = %v, %v; want released", held, err)
			}
		})
	}
}

// With an owner, a MultiLock taken twice needs two Unlocks; its context
// ends with the second. A loss then ends both counts at once, and each
// Unlock still releases one count of the members left.
func TestMultiLock_servers_reentrant(t *testing.T) {
	s := redistest.SharedServer(t)
	c, raw := s.Client(t), s.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(c) })
	ctx := latchkey.WithOwner(context.Background())
	a := mutex.New(c, lockName(t, 0))
	b := mutex.New(c, lockName(t, 1), mutex.WithWatchdogTimeout(renewal))
	m := multilock.New(a, b)

	first, err := m.LockContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.LockContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if first.Err() != nil || second.Err() != nil {
		t.Fatal("a context of the hold ended while the owner still holds it once")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range []context.Context{first, second} {
		if !ended(h.Done()) || context.Cause(h) != context.Canceled {
			t.Fatalf("after the last Unlock: cause %v, want context.Canceled", context.Cause(h))
		}
	}

	for range 2 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	raw.Del(ctx, b.Name())
	if !ended(m.Done()) {
		t.Fatal("Done not closed 5s after member 1 was lost")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) || !strings.Contains(err.Error(), strconv.Quote(b.Name())) {
		t.Fatalf("Err = %v, want ErrLost naming %s", err, b.Name())
	}
	for i := range 2 {
		if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) || strings.Contains(err.Error(), "member 0") {
			t.Fatalf("Unlock %d after the loss = %v, want ErrNotHeld from member 1 alone", i, err)
		}
	}
	if n, err := a.HoldCount(ctx); n != 0 || err != nil {
		t.Fatalf("member 0's HoldCount after both Unlocks = %d, %v; want 0", n, err)
	}
}
