package multilock_test

import (
	"context"
	"testing"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/multilock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/redlock"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// Every latchkey lock is a Member; the primitives do not import multilock.
var (
	_ multilock.Member = (*mutex.Mutex)(nil)
	_ multilock.Member = (*fairlock.Mutex)(nil)
	_ multilock.Member = (*rwlock.ReadLock)(nil)
	_ multilock.Member = (*rwlock.WriteLock)(nil)
	_ multilock.Member = (*redlock.Mutex)(nil)
	_ multilock.Member = (*multilock.MultiLock)(nil)
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
