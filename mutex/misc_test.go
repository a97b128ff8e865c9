package mutex_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMutex_Locker(t *testing.T) {
	s := server(t)
	l := mutex.New(client(t, s), lockName(t)).Locker()

	// sync.Cond over the distributed lock.
	cond := sync.NewCond(l)
	ready := false
	done := make(chan struct{})
	go func() {
		l.Lock()
		for !ready {
			cond.Wait()
		}
		l.Unlock()
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	l.Lock()
	ready = true
	cond.Broadcast()
	l.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("sync.Cond waiter never finished")
	}

	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "not held") {
			t.Fatalf("Unlock of an unheld Locker: recover() = %v, want a not-held panic", r)
		}
	}()
	l.Unlock()
}

func TestMutex_noscript(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	raw := s.Client(t)
	m := mutex.New(client(t, s), lockName(t))
	for range 2 {
		raw.ScriptFlush(ctx)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		raw.ScriptFlush(ctx)
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		raw.ScriptFlush(ctx)
		if ok, err := m.ForceUnlock(ctx); ok || err != nil {
			t.Fatalf("ForceUnlock = %v, %v on a free lock", ok, err)
		}
	}
}

func TestMutex_ForceUnlock(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name, mutex.WithWatchdogTimeout(600*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	admin := mutex.New(client(t, s), name)
	if ok, err := admin.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	if locked, _ := admin.IsLocked(ctx); locked {
		t.Fatal("still locked after ForceUnlock")
	}
	select {
	case <-m.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("holder not told its hold was lost")
	}
}

func TestMutex_badInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	for name, f := range map[string]func(){
		"nil client":        func() { mutex.New(nil, "x") },
		"negative lease":    func() { mutex.New(c, "x", mutex.WithLease(-time.Second)) },
		"zero lease":        func() { mutex.New(c, "x", mutex.WithLease(0)) },
		"1ns lease":         func() { mutex.New(c, "x", mutex.WithLease(time.Nanosecond)) },
		"9ms lease":         func() { mutex.New(c, "x", mutex.WithLease(9*time.Millisecond)) },
		"9ms watchdog":      func() { mutex.New(c, "x", mutex.WithWatchdogTimeout(9*time.Millisecond)) },
		"tiny watchdog":     func() { mutex.New(c, "x", mutex.WithWatchdogTimeout(time.Millisecond)) },
		"negative watchdog": func() { mutex.New(c, "x", mutex.WithWatchdogTimeout(-time.Second)) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r, _ := recover().(string)
				if !strings.HasPrefix(r, "mutex: New: ") {
					t.Fatalf("recover() = %q, want a mutex: New: panic", r)
				}
			}()
			f()
		})
	}
}

func TestMutex_nameWithHashTag(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	raw := s.Client(t)
	name := "{" + lockName(t) + "}:orders"
	m := mutex.New(client(t, s), name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := raw.Exists(ctx, name, "redisson_lock_token:"+name).Val(); n != 2 {
		t.Fatalf("want the lock %q and its token key with the caller's hash tag", name)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMutex_noGoroutineLeaks: after Unlock, loss and ctx cancellation, and
// latchkey.Close, no goroutine started during the test is left (goleak).
func TestMutex_noGoroutineLeaks(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	c := s.Client(t)
	raw := s.Client(t)
	before := goleak.IgnoreCurrent()

	m := mutex.New(c, name, mutex.WithWatchdogTimeout(300*time.Millisecond))
	if err := m.Lock(ctx); err != nil { // unlock
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil { // loss
		t.Fatal(err)
	}
	raw.Del(ctx, name)
	<-m.Done()
	holder := mutex.New(raw, name) // ctx cancellation while waiting
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_ = m.Lock(cctx)
	cancel()
	_ = holder.Unlock(ctx)

	if err := latchkey.Close(c); err != nil {
		t.Fatal(err)
	}
	_ = latchkey.Close(raw)
	goleak.VerifyNone(t, before)
}

// The shortest lease WithLease accepts outlives the round trip that takes
// the lock: Lock gets it (a lease of 1ns, refused by New, made every
// answer too late and Lock retry until its ctx ended).
func TestMutex_minimumLease(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := mutex.New(client(t, s), lockName(t), mutex.WithLease(latchkey.MinLease))
	if err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock with the minimum lease = %v", err)
	}
}
