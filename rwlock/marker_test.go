package rwlock_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// deadWriterBound is how long a writer that died while waiting may hold
// readers back: the life of its mark (1s), with room for a loaded machine.
const deadWriterBound = 3 * time.Second

// A writer that dies while it waits holds new readers back only until its
// mark's deadline: they enter on their own, no message telling them.
func TestRWMutex_deadWaitingWriter(t *testing.T) {
	if redistest.IsChild() {
		waitingWriterChild(t)
		return
	}
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	reader := rwlock.New(client(t, s), name)
	must(t, reader.RLock(bg))

	child := redistest.StartChild(t, "TestRWMutex_deadWaitingWriter", "RWLOCK_ADDR="+s.Addr(), "RWLOCK_NAME="+name)
	child.WaitLine(t, "waiting", 10*time.Second)
	waitMarked(t, raw, name, 1)
	late := rwlock.New(client(t, s), name)
	if ok, err := late.TryRLock(bg, 50*time.Millisecond); ok || err != nil {
		t.Fatalf("TryRLock while a writer waits = %v, %v; want false", ok, err)
	}
	entered := make(chan error, 1)
	go func() { entered <- late.RLock(bg) }()
	time.Sleep(20 * time.Millisecond) // the reader waits
	child.Kill()
	killed := time.Now()
	must(t, within(t, entered, 2*deadWriterBound, "reader after the waiting writer died"))
	took := time.Since(killed)
	t.Logf("the held-back reader entered %v after the waiting writer was killed", took)
	if took > deadWriterBound {
		t.Fatalf("a dead waiting writer held readers back for %v, want at most %v", took, deadWriterBound)
	}
	must(t, late.RUnlock(bg), reader.RUnlock(bg))
}

// waitingWriterChild waits for the write lock, says so once its mark is
// there, and waits to be killed.
func waitingWriterChild(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("RWLOCK_ADDR")})
	name := os.Getenv("RWLOCK_NAME")
	go func() { _ = rwlock.New(c, name).Lock(context.Background()) }()
	waitMarked(t, c, name, 1)
	fmt.Println("waiting")
	time.Sleep(time.Minute)
}

// Redisson's readers know nothing of the mark: one enters while a latchkey
// writer waits, the writer waits for it as for any reader, and its read
// unlock (the hash deleted, "0" published, as Redisson's script does) lets
// the writer in. Redisson's hash holds only its own fields meanwhile.
func TestRWMutex_redissonReaderIgnoresMark(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	reader := rwlock.New(client(t, s), name)
	writer := rwlock.New(client(t, s), name)
	must(t, reader.RLock(bg))
	wrote := make(chan error, 1)
	go func() {
		err := writer.Lock(bg)
		if err == nil {
			err = writer.Unlock(bg)
		}
		wrote <- err
	}()
	waitMarked(t, raw, name, 1)

	// What Redisson's read acquire does on a read-locked hash: one more
	// hold for its owner, its timeout key, and the hash TTL at least the lease.
	raw.HIncrBy(bg, name, javaOwner, 1)
	raw.Set(bg, timeoutKey(name, javaOwner, 1), 1, 30*time.Second)
	if got := raw.HGetAll(bg, name).Val(); len(got) != 3 || got["mode"] != "read" || got[javaOwner] != "1" {
		t.Fatalf("hash while a writer waits = %v, want mode=read and two readers", got)
	}
	must(t, reader.RUnlock(bg))
	select {
	case err := <-wrote:
		t.Fatalf("writer entered beside the Redisson reader (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if ok, err := rwlock.New(client(t, s), name).TryRLock(bg, 0); ok || err != nil {
		t.Fatalf("a new latchkey reader beside the Redisson reader while a writer waits = %v, %v", ok, err)
	}
	// Redisson's read unlock of its last hold.
	raw.Del(bg, timeoutKey(name, javaOwner, 1), name)
	raw.Publish(bg, channelOf(name), "0")
	must(t, within(t, wrote, 5*time.Second, "writer after the Redisson reader's unlock"))
	if raw.Exists(bg, name, markerOf(name)).Val() != 0 {
		t.Fatal("keys left behind")
	}
}

// epochOf counts the write releases while readers were held back.
func epochOf(name string) string { return "latchkey_rwlock_epoch:{" + name + "}" }

// Writers do not starve readers either: a reader held back by a writer
// enters after that writer's Unlock even though another writer waits by
// then (sync.RWMutex's rule), while a reader that comes after the Unlock
// waits behind the waiting writer. The first writer keeps a read hold
// (a downgrade), so that the lock stays read-locked and the order is
// deterministic.
func TestRWMutex_heldBackReadersGoFirst(t *testing.T) {
	forEachBackend(t, func(t *testing.T, newClient func() *redis.Client) {
		name := lockName(t)
		bg := context.Background()
		raw := newClient()
		first := rwlock.New(raw, name)
		held := rwlock.New(newClient(), name)
		second := rwlock.New(newClient(), name)
		wctx := latchkey.WithOwner(bg)
		must(t, first.Lock(wctx), first.RLock(wctx))

		entered := make(chan error, 1)
		go func() { entered <- held.RLock(bg) }()
		deadline := time.Now().Add(10 * time.Second)
		for raw.Exists(bg, epochOf(name)).Val() == 0 { // the reader was held back
			if time.Now().After(deadline) {
				t.Fatal("no reader held back")
			}
			time.Sleep(2 * time.Millisecond)
		}
		var wrote = make(chan error, 1)
		var writing atomic.Bool
		go func() {
			err := second.Lock(bg)
			writing.Store(true)
			if err == nil {
				err = second.Unlock(bg)
			}
			wrote <- err
		}()
		waitMarked(t, raw, name, 1)

		must(t, first.Unlock(wctx)) // downgraded: the lock stays read-locked
		must(t, within(t, entered, 5*time.Second, "held-back reader after the write Unlock"))
		if writing.Load() {
			t.Fatal("the second writer entered beside readers")
		}
		if ok, err := rwlock.New(newClient(), name).TryRLock(bg, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("a reader that came after the Unlock while a writer waits: TryRLock = %v, %v; want false", ok, err)
		}
		must(t, first.RUnlock(wctx), held.RUnlock(bg))
		must(t, within(t, wrote, 5*time.Second, "the second writer after the readers"))
	})
}
