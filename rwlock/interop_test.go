package rwlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/rwlock"
)

// Holds written the way a Java Redisson client writes them.
const javaOwner = "5d1ca1e2-0000-4000-8000-000000000000:7"

// A Redisson writer releases by deleting the hash and publishing "1":
// every latchkey reader blocked behind it must wake on that message.
func TestRWMutex_foreignWriter(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	raw.HSet(bg, name, "mode", "write", javaOwner+":write", 1)
	raw.PExpire(bg, name, 30*time.Second)

	const readers = 4
	entered := make(chan error, readers)
	rws := make([]*rwlock.RWMutex, 2)
	for i := range rws {
		rws[i] = rwlock.New(client(t, s), name)
	}
	for i := range readers {
		go func() { entered <- rws[i%2].RLock(bg) }()
	}
	waitSubscribers(t, raw, channelOf(name), 2)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	raw.Del(bg, name)
	raw.Publish(bg, channelOf(name), "1")
	for range readers {
		must(t, within(t, entered, 2*time.Second, "reader after the foreign write unlock"))
	}
	t.Logf("%d readers entered within %v of the foreign write unlock", readers, time.Since(start))
	for i := range readers {
		must(t, rws[i%2].RUnlock(bg))
	}
}

// A Redisson reader shares with latchkey readers, and a latchkey read
// release keeps the hash alive for it, with its timeout key's TTL.
func TestRWMutex_foreignReader(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	bg := context.Background()
	raw.HSet(bg, name, "mode", "read", javaOwner, 1)
	raw.Set(bg, timeoutKey(name, javaOwner, 1), 1, 20*time.Second)
	raw.PExpire(bg, name, 20*time.Second)

	rw := rwlock.New(client(t, s), name, rwlock.WithLease(time.Minute))
	if ok, err := rw.TryRLock(bg, 0); !ok || err != nil {
		t.Fatalf("TryRLock beside a Redisson reader = %v, %v", ok, err)
	}
	if ok, err := rwlock.New(client(t, s), name).TryLock(bg, 0); ok || err != nil {
		t.Fatalf("TryLock beside readers = %v, %v; want false", ok, err)
	}
	must(t, rw.RUnlock(bg))
	if ttl := raw.PTTL(bg, name).Val(); ttl < 19*time.Second || ttl > 20*time.Second {
		t.Fatalf("hash TTL after our release = %v, want the Redisson reader's ~20s", ttl)
	}
	if got := raw.HGetAll(bg, name).Val(); len(got) != 2 || got[javaOwner] != "1" {
		t.Fatalf("hash after our release = %v, want the Redisson reader alone", got)
	}
}
