package rwlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/rwlock"
)

func TestRWMutex_redissonLayout(t *testing.T) {
	s := server(t)
	ctx := latchkey.WithOwner(context.Background())
	id := latchkey.OwnerID(ctx)
	name := lockName(t)
	rw := rwlock.New(client(t, s), name)
	raw := s.Client(t)
	sub := raw.Subscribe(ctx, channelOf(name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}

	for i := 1; i <= 2; i++ {
		must(t, rw.RLock(ctx))
		if got := raw.HGetAll(ctx, name).Val(); len(got) != 2 || got["mode"] != "read" || got[id] != strconv.Itoa(i) {
			t.Fatalf("after %d RLock: hash = %v, want mode=read, %s=%d", i, got, id, i)
		}
		if ttl := raw.PTTL(ctx, timeoutKey(name, id, i)).Val(); ttl < 29*time.Second || ttl > 30*time.Second {
			t.Fatalf("timeout key %d PTTL = %v, want close to 30s", i, ttl)
		}
	}
	if ttl := raw.PTTL(ctx, name).Val(); ttl < 29*time.Second || ttl > 30*time.Second {
		t.Errorf("hash PTTL = %v, want close to the 30s watchdog lease", ttl)
	}
	must(t, rw.RUnlock(ctx))
	if raw.Exists(ctx, timeoutKey(name, id, 2)).Val() != 0 || raw.Exists(ctx, timeoutKey(name, id, 1)).Val() != 1 {
		t.Fatal("RUnlock must delete the timeout key of the last hold only")
	}
	must(t, rw.RUnlock(ctx))
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "0" {
		t.Fatalf("read unlock message = %v, %v; want \"0\"", msg, err)
	}
	if n := raw.Exists(ctx, name, timeoutKey(name, id, 1)).Val(); n != 0 {
		t.Fatal("keys left after the last RUnlock")
	}

	must(t, rw.Lock(ctx))
	if got := raw.HGetAll(ctx, name).Val(); len(got) != 2 || got["mode"] != "write" || got[id+":write"] != "1" {
		t.Fatalf("after Lock: hash = %v, want mode=write, %s:write=1", got, id)
	}
	must(t, rw.Unlock(ctx))
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "1" {
		t.Fatalf("write unlock message = %v, %v; want \"1\"", msg, err)
	}
	if raw.Exists(ctx, name).Val() != 0 {
		t.Fatal("hash left after Unlock")
	}

	// A plain hold's owner is a fresh <uuid>:<n>.
	must(t, rw.RLock(context.Background()))
	for f := range raw.HGetAll(ctx, name).Val() {
		if uuid, n, ok := strings.Cut(f, ":"); f != "mode" && (!ok || len(uuid) != 36 || strings.Trim(n, "0123456789") != "") {
			t.Errorf("field %q is not <uuid>:<n>", f)
		}
	}
	must(t, rw.RUnlock(context.Background()))
}

func TestRWMutex_readersShare(t *testing.T) {
	s := server(t)
	name := lockName(t)
	ctx := context.Background()
	var readers []*rwlock.RWMutex
	for range 5 {
		rw := rwlock.New(client(t, s), name)
		for range 2 { // two plain readers per handle
			if ok, err := rw.TryRLock(ctx, 0); !ok || err != nil {
				t.Fatalf("reader TryRLock = %v, %v; want true", ok, err)
			}
		}
		readers = append(readers, rw)
	}
	if n := s.Client(t).HLen(ctx, name).Val(); n != 11 {
		t.Fatalf("hash has %d fields, want mode + 10 readers", n)
	}
	writer := rwlock.New(client(t, s), name)
	if ok, err := writer.TryLock(ctx, 50*time.Millisecond); ok || err != nil {
		t.Fatalf("writer TryLock among readers = %v, %v; want false", ok, err)
	}
	got := make(chan error, 1)
	go func() { got <- writer.Lock(ctx) }()
	for i, rw := range readers {
		for range 2 {
			select {
			case err := <-got:
				t.Fatalf("writer entered (%v) with readers left on handle %d", err, i)
			default:
			}
			must(t, rw.RUnlock(ctx))
		}
	}
	must(t, within(t, got, 5*time.Second, "writer after the last reader"))
	if err := readers[0].RUnlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("third RUnlock of a handle with two readers = %v, want ErrNotHeld", err)
	}
	must(t, writer.Unlock(ctx))
}

func TestRWMutex_writerExcludes(t *testing.T) {
	s := server(t)
	name := lockName(t)
	ctx := context.Background()
	rw := rwlock.New(client(t, s), name)
	other := rwlock.New(client(t, s), name)
	must(t, rw.Lock(ctx))
	for _, try := range []struct {
		what string
		f    func() (bool, error)
	}{
		{"other TryRLock", func() (bool, error) { return other.TryRLock(ctx, 30*time.Millisecond) }},
		{"other TryLock", func() (bool, error) { return other.TryLock(ctx, 30*time.Millisecond) }},
		{"same handle plain TryRLock", func() (bool, error) { return rw.TryRLock(ctx, 30*time.Millisecond) }},
		{"same handle plain TryLock", func() (bool, error) { return rw.TryLock(ctx, 30*time.Millisecond) }},
		{"other owner TryRLock", func() (bool, error) { return other.TryRLock(latchkey.WithOwner(ctx), 0) }},
	} {
		if ok, err := try.f(); ok || err != nil {
			t.Errorf("%s while written = %v, %v; want false", try.what, ok, err)
		}
	}
	if locked, err := rw.IsLocked(ctx); !locked || err != nil {
		t.Errorf("IsLocked = %v, %v", locked, err)
	}
	if locked, _ := rw.WriteLock().IsLocked(ctx); !locked {
		t.Error("WriteLock().IsLocked = false while written")
	}
	if locked, _ := rw.ReadLock().IsLocked(ctx); locked {
		t.Error("ReadLock().IsLocked = true while only written")
	}
	must(t, rw.Unlock(ctx))
	if ok, err := other.TryRLock(ctx, 0); !ok || err != nil {
		t.Fatalf("TryRLock after Unlock = %v, %v", ok, err)
	}
	if locked, _ := rw.ReadLock().IsLocked(ctx); !locked {
		t.Error("ReadLock().IsLocked = false while read")
	}
	_ = other.RUnlock(ctx)
}

func TestRWMutex_reentrancy(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	rw := rwlock.New(client(t, s), name)
	other := rwlock.New(client(t, s), name)
	ctx := latchkey.WithOwner(context.Background())
	id := latchkey.OwnerID(ctx)

	for range 3 {
		must(t, rw.Lock(ctx))
	}
	if n := raw.HGet(ctx, name, id+":write").Val(); n != "3" {
		t.Fatalf("write holds = %q, want 3", n)
	}
	for i := 3; i > 0; i-- {
		if ok, err := other.TryRLock(context.Background(), 10*time.Millisecond); ok || err != nil {
			t.Fatalf("other reader entered with %d write holds left (err %v)", i, err)
		}
		must(t, rw.Unlock(context.WithoutCancel(ctx)))
	}
	if err := rw.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("fourth Unlock = %v, want ErrNotHeld", err)
	}

	for range 3 {
		must(t, rw.RLock(ctx))
	}
	if n := raw.HGet(ctx, name, id).Val(); n != "3" || raw.Exists(ctx, timeoutKey(name, id, 3)).Val() != 1 {
		t.Fatalf("read holds = %q, want 3 with 3 timeout keys", n)
	}
	for i := 3; i > 0; i-- {
		if ok, err := other.TryLock(context.Background(), 10*time.Millisecond); ok || err != nil {
			t.Fatalf("writer entered with %d read holds left (err %v)", i, err)
		}
		must(t, rw.RUnlock(ctx))
	}
	if err := rw.RUnlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("fourth RUnlock = %v, want ErrNotHeld", err)
	}
	if raw.Exists(ctx, name).Val() != 0 {
		t.Fatal("hash left after every hold was released")
	}
}

// The writer may read; its write Unlock leaves it reading, and readers
// blocked behind it enter at once, not at its TTL.
func TestRWMutex_downgrade(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), name)
	other := rwlock.New(client(t, s), name)
	ctx := latchkey.WithOwner(bg)
	must(t, rw.Lock(ctx))
	if ok, err := rw.TryRLock(ctx, 0); !ok || err != nil {
		t.Fatalf("writer's TryRLock = %v, %v; want true", ok, err)
	}
	if locked, _ := rw.ReadLock().IsLocked(bg); !locked {
		t.Error("ReadLock().IsLocked = false while the writer reads")
	}
	entered := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		if err := other.RLock(bg); err != nil {
			t.Error(err)
		}
		entered <- time.Since(start)
	}()
	waitSubscribers(t, s.Client(t), channelOf(name), 1)
	time.Sleep(20 * time.Millisecond) // the reader's attempt after subscribing
	start := time.Now()
	must(t, rw.Unlock(ctx))
	within(t, entered, 2*time.Second, "reader after the downgrade") // the wait loop's backstop is 5s
	t.Logf("blocked reader entered %v after the downgrade", time.Since(start))
	if ok, err := other.TryLock(bg, 0); ok || err != nil {
		t.Fatalf("TryLock while the downgraded owner reads = %v, %v; want false", ok, err)
	}
	if locked, _ := rw.WriteLock().IsLocked(bg); locked {
		t.Error("WriteLock().IsLocked after the downgrade")
	}
	must(t, rw.RUnlock(ctx), other.RUnlock(bg))
	if ok, err := other.TryLock(bg, 0); !ok || err != nil {
		t.Fatalf("TryLock after every reader left = %v, %v", ok, err)
	}
	_ = other.Unlock(bg)
}

// An owner holding only read locks that asks for write gets an error at
// once; without an owner there is no detection and Lock waits.
func TestRWMutex_upgradeWouldDeadlock(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), name)
	ctx := latchkey.WithOwner(bg)
	must(t, rw.RLock(ctx))
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := rw.Lock(tctx); !errors.Is(err, latchkey.ErrWouldDeadlock) {
		t.Fatalf("Lock while reading = %v, want ErrWouldDeadlock", err)
	}
	t.Logf("ErrWouldDeadlock after %v", time.Since(start))
	if ok, err := rw.WriteLock().TryLock(ctx, time.Minute); ok || !errors.Is(err, latchkey.ErrWouldDeadlock) {
		t.Fatalf("TryLock while reading = %v, %v; want false, ErrWouldDeadlock", ok, err)
	}
	// Another reader present changes nothing.
	must(t, rw.RLock(bg))
	if err := rw.Lock(ctx); !errors.Is(err, latchkey.ErrWouldDeadlock) {
		t.Fatalf("Lock while reading with another reader = %v, want ErrWouldDeadlock", err)
	}
	must(t, rw.RUnlock(ctx))

	// Plain: a fresh owner per call, so Lock waits for the plain reader.
	if ok, err := rw.TryLock(bg, 50*time.Millisecond); ok || err != nil {
		t.Fatalf("plain TryLock with a plain reader = %v, %v; want false, nil", ok, err)
	}
	got := make(chan error, 1)
	go func() { got <- rw.Lock(bg) }()
	time.Sleep(50 * time.Millisecond)
	must(t, rw.RUnlock(bg))
	must(t, within(t, got, 5*time.Second, "plain Lock after the plain RUnlock"))
	must(t, rw.Unlock(bg))
}

func TestRWMutex_notHeld(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), name)
	ctx := latchkey.WithOwner(bg)

	if err := rw.RUnlock(bg); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("plain RUnlock of nothing = %v, want ErrNotHeld", err)
	}
	if err := rw.RUnlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("owner RUnlock of nothing = %v, want ErrNotHeld", err)
	}
	if err := rw.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("owner Unlock of nothing = %v, want ErrNotHeld", err)
	}

	// A read hold is not released by Unlock.
	must(t, rw.RLock(ctx), rw.RLock(bg))
	before := raw.HGetAll(bg, name).Val()
	if err := rw.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("owner Unlock of a read hold = %v, want ErrNotHeld", err)
	}
	if err := rw.Unlock(bg); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("plain Unlock of a plain read hold = %v, want ErrNotHeld", err)
	}
	if err := rwlock.New(client(t, s), name).RUnlock(bg); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("RUnlock by a handle without holds = %v, want ErrNotHeld", err)
	}
	if after := raw.HGetAll(bg, name).Val(); len(after) != 3 || after["mode"] != "read" || len(before) != 3 {
		t.Fatalf("hash changed by refused unlocks: before %v, after %v", before, after)
	}
	if err := rw.ReadLock().Err(); err != nil {
		t.Fatalf("Err after refused unlocks = %v", err)
	}
	must(t, rw.RUnlock(ctx), rw.RUnlock(bg))

	// A write hold is not released by RUnlock.
	must(t, rw.Lock(ctx))
	if err := rw.RUnlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("owner RUnlock of a write hold = %v, want ErrNotHeld", err)
	}
	if raw.HGet(bg, name, latchkey.OwnerID(ctx)+":write").Val() != "1" {
		t.Fatal("write hold changed by RUnlock")
	}
	must(t, rw.Unlock(ctx))
}
