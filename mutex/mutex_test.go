package mutex_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

func TestMutex_redissonLayout(t *testing.T) {
	s := server(t)
	c := client(t, s)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(c, name)

	raw := s.Client(t)
	sub := raw.Subscribe(ctx, "redisson_lock__channel:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}

	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	fields, err := raw.HGetAll(ctx, name).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 1 {
		t.Fatalf("lock hash = %v, want one field", fields)
	}
	for field, count := range fields {
		uuid, n, ok := strings.Cut(field, ":")
		if !ok || len(uuid) != 36 || n == "" || strings.Trim(n, "0123456789") != "" || count != "1" {
			t.Fatalf("field %q = %q, want <uuid>:<n> = 1", field, count)
		}
	}
	if ttl := raw.PTTL(ctx, name).Val(); ttl < 29*time.Second || ttl > 30*time.Second {
		t.Errorf("PTTL = %v, want close to the 30s watchdog lease", ttl)
	}
	// A new counter starts from the server's clock in microseconds, so that
	// tokens keep increasing after a restart that lost it.
	tok, err := raw.Get(ctx, "redisson_lock_token:{"+name+"}").Int64()
	if err != nil || m.Token() != tok || tok < time.Now().Add(-time.Hour).UnixMicro() {
		t.Errorf("token key = %d (%v), Token() = %d; want the same, from the clock in µs", tok, err, m.Token())
	}

	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "0" {
		t.Fatalf("unlock message = %v, %v; want \"0\"", msg, err)
	}
	if n := raw.Exists(ctx, name).Val(); n != 0 {
		t.Error("lock key still exists after unlock")
	}
}

// A Java Redisson holder releases by deleting the key and publishing "0":
// a latchkey waiter must wake on that message, long before the TTL.
func TestMutex_wokenByForeignRelease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	foreign := "5d1ca1e2-0000-4000-8000-000000000000:1"
	raw.HSet(ctx, name, foreign, 1)
	raw.PExpire(ctx, name, 30*time.Second)

	m := mutex.New(client(t, s), name)
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	waitForSubscriber(t, raw, "redisson_lock__channel:{"+name+"}")

	start := time.Now()
	raw.Del(ctx, name)
	raw.Publish(ctx, "redisson_lock__channel:{"+name+"}", "0")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("woken %v after the foreign release", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("waiter not woken by the unlock message")
	}
	_ = m.Unlock(ctx)
}

// waitForWaiter waits until a waiter for the lock name is queued and
// listens on its Hub's channel, where a latchkey release tells it.
func waitForWaiter(t *testing.T, c *redis.Client, name string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		queued := c.LLen(ctx, "latchkey_lock_queue:{"+name+"}").Val() > 0
		if queued && len(c.PubSubChannels(ctx, "latchkey_lock__channel:{"+name+"}:*").Val()) > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no waiter for %s queued and subscribed", name)
}

func waitForSubscriber(t *testing.T, c *redis.Client, channel string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if n := c.PubSubNumSub(context.Background(), channel).Val()[channel]; n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("nobody subscribed to %s", channel)
}

func TestMutex_mutualExclusion(t *testing.T) {
	s := server(t)
	name := lockName(t)
	const goroutines, rounds = 16, 500
	shared := mutex.New(client(t, s), name)
	handles := make([]*mutex.Mutex, goroutines)
	for i := range handles {
		handles[i] = mutex.New(client(t, s), name)
	}

	var inside, maxInside atomic.Int32
	counter := 0 // deliberately not atomic: the lock must protect it
	errs := make(chan error, 2*goroutines)
	var wg sync.WaitGroup
	run := func(m *mutex.Mutex) {
		defer wg.Done()
		ctx := context.Background()
		for range rounds {
			if err := m.Lock(ctx); err != nil {
				errs <- err
				return
			}
			n := inside.Add(1)
			if n > maxInside.Load() {
				maxInside.Store(n)
			}
			counter++
			inside.Add(-1)
			if err := m.Unlock(ctx); err != nil {
				errs <- err
				return
			}
		}
	}
	start := time.Now()
	for i := range goroutines {
		wg.Add(2)
		go run(shared)
		go run(handles[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d acquisitions in %v", 2*goroutines*rounds, time.Since(start))
	if maxInside.Load() != 1 || counter != 2*goroutines*rounds {
		t.Fatalf("max inside = %d, counter = %d; want 1 and %d", maxInside.Load(), counter, 2*goroutines*rounds)
	}
}

func TestMutex_reentrancy(t *testing.T) {
	s := server(t)
	name := lockName(t)
	m := mutex.New(client(t, s), name)
	other := mutex.New(client(t, s), name)
	ctx := latchkey.WithOwner(context.Background())
	otherCtx := latchkey.WithOwner(context.Background())

	for range 3 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := m.HoldCount(ctx); n != 3 || err != nil {
		t.Fatalf("HoldCount = %d, %v; want 3", n, err)
	}
	for i := 3; i > 0; i-- {
		if ok, err := other.TryLock(otherCtx, 20*time.Millisecond); ok || err != nil {
			t.Fatalf("other owner acquired with %d holds left (err %v)", i, err)
		}
		if err := m.Unlock(context.WithoutCancel(ctx)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("fourth Unlock = %v, want ErrNotHeld", err)
	}
	if ok, err := other.TryLock(otherCtx, time.Second); !ok || err != nil {
		t.Fatalf("other owner TryLock = %v, %v after the last Unlock", ok, err)
	}
	_ = other.Unlock(otherCtx)

	// Without an owner a second Lock on a held handle waits, like sync.Mutex.
	plain := context.Background()
	if err := m.Lock(plain); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryLock(plain, 50*time.Millisecond); ok || err != nil {
		t.Fatalf("second plain TryLock on the handle = %v, %v; want false", ok, err)
	}
	if n, _ := m.HoldCount(plain); n != 1 {
		t.Fatalf("plain HoldCount = %d, want 1", n)
	}
	if err := m.Unlock(plain); err != nil {
		t.Fatal(err)
	}
}

func TestMutex_Unlock_nonHolder(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	ctx := context.Background()
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	before := raw.HGetAll(ctx, name).Val()

	stranger := mutex.New(client(t, s), name)
	if err := stranger.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("plain Unlock by a non-holder = %v, want ErrNotHeld", err)
	}
	if err := stranger.Unlock(latchkey.WithOwner(ctx)); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("owner Unlock by a non-holder = %v, want ErrNotHeld", err)
	}
	after := raw.HGetAll(ctx, name).Val()
	if len(after) != 1 || len(before) != 1 || after[firstKey(before)] != "1" || raw.PTTL(ctx, name).Val() <= 0 {
		t.Fatalf("holder's key changed: before %v, after %v", before, after)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
