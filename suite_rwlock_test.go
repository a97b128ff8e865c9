package latchkey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
)

func init() {
	register("rwlock/layout", rwlockLayout)
	register("rwlock/readers-share-writer-excludes", rwlockShareExclude)
	register("rwlock/reentrant-downgrade", rwlockDowngrade)
	register("rwlock/upgrade-would-deadlock", rwlockUpgrade)
	register("rwlock/not-held", rwlockNotHeld)
	register("rwlock/write-unlock-wakes-readers", rwlockWakeReaders)
	register("rwlock/expired-reader-cleanup", rwlockExpiredReader)
}

// Redisson's keys: the hash with mode and owner fields, one timeout key per
// read hold; all in one hash slot, so the scripts run in a cluster too.
func rwlockLayout(t *testing.T, e *env) {
	c := e.Client()
	ctx := latchkey.WithOwner(context.Background())
	id := latchkey.OwnerID(ctx)
	rw := rwlock.New(c, e.Name)
	rwlockDo(t, rw.Lock(ctx), rw.RLock(ctx), rw.RLock(ctx))
	got := c.HGetAll(ctx, e.Name).Val()
	if len(got) != 3 || got["mode"] != "write" || got[id+":write"] != "1" || got[id] != "2" {
		t.Fatalf("hash = %v, want mode=write, %s:write=1, %s=2", got, id, id)
	}
	tk := "{" + e.Name + "}:" + id + ":rwlock_timeout:"
	if n := c.Exists(ctx, tk+"1", tk+"2").Val(); n != 2 {
		t.Fatalf("%d of 2 timeout keys %s1..2", n, tk)
	}
	rwlockDo(t, rw.Unlock(ctx))
	if mode := c.HGet(ctx, e.Name, "mode").Val(); mode != "read" {
		t.Fatalf("mode after the write Unlock = %q, want read", mode)
	}
	rwlockDo(t, rw.RUnlock(ctx), rw.RUnlock(ctx))
	if n := c.Exists(ctx, e.Name, tk+"1").Val(); n != 0 {
		t.Fatal("keys left after the last RUnlock")
	}
}

func rwlockShareExclude(t *testing.T, e *env) {
	bg := context.Background()
	a, b := rwlock.New(e.Client(), e.Name), rwlock.New(e.Client(), e.Name)
	rwlockTry(t, "first reader", true)(a.TryRLock(bg, 0))
	rwlockTry(t, "second reader", true)(b.TryRLock(bg, 0))
	rwlockTry(t, "writer among readers", false)(b.TryLock(bg, 20*time.Millisecond))
	rwlockDo(t, a.RUnlock(bg), b.RUnlock(bg))
	rwlockTry(t, "writer", true)(a.TryLock(bg, 0))
	rwlockTry(t, "reader while written", false)(b.TryRLock(bg, 20*time.Millisecond))
	rwlockTry(t, "second writer", false)(b.TryLock(bg, 0))
	rwlockDo(t, a.Unlock(bg))
	rwlockTry(t, "reader after the writer", true)(b.TryRLock(bg, 0))
	rwlockDo(t, b.RUnlock(bg))
}

func rwlockDowngrade(t *testing.T, e *env) {
	bg := context.Background()
	ctx := latchkey.WithOwner(bg)
	rw, other := rwlock.New(e.Client(), e.Name), rwlock.New(e.Client(), e.Name)
	rwlockDo(t, rw.Lock(ctx), rw.Lock(ctx), rw.RLock(ctx), rw.Unlock(ctx))
	rwlockTry(t, "reader while the writer re-entered", false)(other.TryRLock(bg, 0))
	rwlockDo(t, rw.Unlock(ctx))
	rwlockTry(t, "reader after the downgrade", true)(other.TryRLock(bg, 0))
	rwlockTry(t, "writer after the downgrade", false)(other.TryLock(bg, 0))
	rwlockDo(t, other.RUnlock(bg), rw.RUnlock(ctx))
	rwlockTry(t, "writer after every reader", true)(other.TryLock(bg, 0))
	rwlockDo(t, other.Unlock(bg))
}

func rwlockUpgrade(t *testing.T, e *env) {
	ctx := latchkey.WithOwner(context.Background())
	rw := rwlock.New(e.Client(), e.Name)
	rwlockDo(t, rw.RLock(ctx))
	if ok, err := rw.TryLock(ctx, time.Minute); ok || !errors.Is(err, latchkey.ErrWouldDeadlock) {
		t.Fatalf("TryLock by a reader = %v, %v; want false, ErrWouldDeadlock", ok, err)
	}
	rwlockDo(t, rw.RUnlock(ctx), rw.Lock(ctx), rw.Unlock(ctx))
}

func rwlockNotHeld(t *testing.T, e *env) {
	bg := context.Background()
	ctx := latchkey.WithOwner(bg)
	rw := rwlock.New(e.Client(), e.Name)
	for what, err := range map[string]error{"RUnlock": rw.RUnlock(ctx), "Unlock": rw.Unlock(bg)} {
		if !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("%s of nothing = %v, want ErrNotHeld", what, err)
		}
	}
	rwlockDo(t, rw.RLock(ctx))
	if err := rw.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock of a read hold = %v, want ErrNotHeld", err)
	}
	rwlockDo(t, rw.RUnlock(ctx))
}

func rwlockWakeReaders(t *testing.T, e *env) {
	bg := context.Background()
	writer := rwlock.New(e.Client(), e.Name)
	rwlockDo(t, writer.Lock(bg))
	const readers = 6
	rws := []*rwlock.RWMutex{rwlock.New(e.Client(), e.Name), rwlock.New(e.Client(), e.Name)}
	entered := make(chan error, readers)
	for i := range readers {
		go func() {
			rw := rws[i%2]
			err := rw.RLock(bg)
			if err == nil {
				err = rw.RUnlock(bg)
			}
			entered <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // every reader waiting
	start := time.Now()
	rwlockDo(t, writer.Unlock(bg))
	for range readers {
		select {
		case err := <-entered:
			rwlockDo(t, err)
		case <-time.After(2 * time.Second): // the wait loop's backstop is 5s
			t.Fatal("reader not woken by the write unlock")
		}
	}
	t.Logf("%d readers in and out within %v of the write unlock", readers, time.Since(start))
}

// A reader that stopped (its lease ran out) does not keep the lock: the
// next read unlock finds no live hold left and frees it.
func rwlockExpiredReader(t *testing.T, e *env) {
	bg := context.Background()
	dead := rwlock.New(e.Client(), e.Name, rwlock.WithLease(200*time.Millisecond))
	live := rwlock.New(e.Client(), e.Name, rwlock.WithLease(10*time.Second))
	rwlockDo(t, dead.RLock(bg), live.RLock(bg))
	e.Advance(400 * time.Millisecond)
	writer := rwlock.New(e.Client(), e.Name)
	rwlockTry(t, "writer beside a live reader", false)(writer.TryLock(bg, 0))
	rwlockDo(t, live.RUnlock(bg))
	rwlockTry(t, "writer after the live reader", true)(writer.TryLock(bg, 0))
	rwlockDo(t, writer.Unlock(bg))
}

func rwlockDo(t *testing.T, errs ...error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
}

func rwlockTry(t *testing.T, what string, want bool) func(bool, error) {
	t.Helper()
	return func(ok bool, err error) {
		t.Helper()
		if ok != want || err != nil {
			t.Fatalf("%s = %v, %v; want %v", what, ok, err, want)
		}
	}
}
