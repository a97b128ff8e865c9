package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

func TestRWMutex_WithLease_expires(t *testing.T) {
	s := server(t)
	name := lockName(t)
	bg := context.Background()
	rw := rwlock.New(client(t, s), name, rwlock.WithLease(300*time.Millisecond))
	for _, side := range []struct {
		what         string
		lock, unlock func(context.Context) error
		hold         interface {
			Done() <-chan struct{}
			Err() error
		}
	}{{"read", rw.RLock, rw.RUnlock, rw.ReadLock()}, {"write", rw.Lock, rw.Unlock, rw.WriteLock()}} {
		start := time.Now()
		must(t, side.lock(bg))
		within(t, side.hold.Done(), 5*time.Second, side.what+" hold's Done")
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Errorf("%s hold lost after %v, before its 300ms lease", side.what, d)
		}
		if err := side.hold.Err(); !errors.Is(err, latchkey.ErrLost) {
			t.Errorf("%s Err = %v, want ErrLost", side.what, err)
		}
		if err := side.unlock(bg); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Errorf("%s unlock after the lease = %v, want ErrNotHeld", side.what, err)
		}
		time.Sleep(100 * time.Millisecond) // the local timer may fire just before the key expires
		if n := s.Client(t).Exists(bg, name).Val(); n != 0 {
			t.Errorf("%s: lock key still exists after its lease", side.what)
		}
	}
}

// Redisson's testReadLockLeaseTimeout: each read hold has its own lease,
// and releasing the newest brings the lock's TTL back to the oldest's.
func TestRWMutex_WithLease_perHold(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	ctx := latchkey.WithOwner(context.Background())
	rw := rwlock.New(client(t, s), name, rwlock.WithLease(600*time.Millisecond))
	start := time.Now()
	must(t, rw.RLock(ctx))
	time.Sleep(300 * time.Millisecond)
	must(t, rw.RLock(ctx))
	if ttl := raw.PTTL(ctx, name).Val(); ttl < 500*time.Millisecond {
		t.Fatalf("TTL with a fresh second hold = %v, want its whole lease", ttl)
	}
	must(t, rw.RUnlock(ctx))
	if ttl := raw.PTTL(ctx, name).Val(); ttl <= 0 || ttl > 600*time.Millisecond-time.Since(start)+20*time.Millisecond {
		t.Fatalf("TTL after releasing the second hold = %v, want the first's remaining lease", ttl)
	}
	writer := rwlock.New(client(t, s), name)
	if ok, err := writer.TryLock(context.Background(), 2*time.Second); !ok || err != nil {
		t.Fatalf("writer TryLock after the first hold's lease = %v, %v", ok, err)
	}
	t.Logf("writer entered %v after the first read hold (lease 600ms)", time.Since(start))
	_ = writer.Unlock(context.Background())
}

// Holds taken without a lease outlive many watchdog timeouts.
func TestRWMutex_watchdogRenews(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	ctx := latchkey.WithOwner(bg)
	id := latchkey.OwnerID(ctx)
	// A timeout a loaded machine's renewals can meet: a renewal runs every
	// third of it, and one that misses the timeout less the drift is a loss.
	rw := rwlock.New(client(t, s), name, rwlock.WithWatchdogTimeout(time.Second))
	must(t, rw.Lock(ctx))
	for range 2 {
		must(t, rw.RLock(ctx))
	}
	time.Sleep(3 * time.Second)
	if err := rw.Unlock(ctx); err != nil {
		t.Fatalf("Unlock after 3 watchdog timeouts = %v", err)
	}
	time.Sleep(3 * time.Second)
	for i := 1; i <= 2; i++ {
		if raw.Exists(bg, timeoutKey(name, id, i)).Val() != 1 {
			t.Fatalf("timeout key %d expired although renewed", i)
		}
	}
	for range 2 {
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatalf("RUnlock after 6 watchdog timeouts = %v", err)
		}
	}
	if err := rw.ReadLock().Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

// A reader that crashes is not kept alive by another process's watchdog:
// its hold expires with its lease, and the next read unlock cleans it up
// and lets a writer in (Redisson's testMultiInstanceReadLockZombieCleanup,
// with a SIGKILLed process).
func TestRWMutex_crashedReader(t *testing.T) {
	if redistest.IsChild() {
		crashedReaderChild(t)
		return
	}
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	const watchdog = 500 * time.Millisecond

	child := redistest.StartChild(t, "TestRWMutex_crashedReader", "RWLOCK_ADDR="+s.Addr(), "RWLOCK_NAME="+name)
	dead := strings.TrimPrefix(child.WaitLine(t, "locked ", 10*time.Second), "locked ")
	child.Kill()

	reader := rwlock.New(client(t, s), name, rwlock.WithWatchdogTimeout(watchdog))
	ctx := latchkey.WithOwner(bg)
	must(t, reader.RLock(ctx))
	writer := rwlock.New(client(t, s), name)
	got := make(chan time.Time, 1)
	go func() {
		if err := writer.Lock(bg); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	time.Sleep(3 * watchdog)
	if raw.Exists(bg, timeoutKey(name, dead, 1)).Val() != 0 {
		t.Fatal("the crashed reader's timeout key was renewed")
	}
	if raw.Exists(bg, timeoutKey(name, latchkey.OwnerID(ctx), 1)).Val() != 1 || raw.HGet(bg, name, dead).Val() != "1" {
		t.Fatal("want the live reader's hold renewed and the dead one's field still in the hash")
	}
	select {
	case <-got:
		t.Fatal("writer entered while a live reader holds")
	default:
	}
	start := time.Now()
	must(t, reader.RUnlock(ctx))
	at := within(t, got, 2*time.Second, "writer after the last live reader")
	t.Logf("writer entered %v after the last live reader left", at.Sub(start))
	if raw.HExists(bg, name, dead).Val() {
		t.Fatal("the crashed reader's field survived the cleanup")
	}
	_ = writer.Unlock(bg)
}

// crashedReaderChild takes a read hold with a short watchdog, prints its
// owner and waits to be killed.
func crashedReaderChild(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("RWLOCK_ADDR")})
	rw := rwlock.New(c, os.Getenv("RWLOCK_NAME"), rwlock.WithWatchdogTimeout(500*time.Millisecond))
	ctx := latchkey.WithOwner(context.Background())
	must(t, rw.RLock(ctx))
	fmt.Println("locked", latchkey.OwnerID(ctx))
	time.Sleep(time.Minute)
}
