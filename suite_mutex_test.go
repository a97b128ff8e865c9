package latchkey_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
)

func init() {
	register("mutex/lock-unlock", func(t *testing.T, e *env) {
		ctx := context.Background()
		m := mutex.New(e.Client(), e.Name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if locked, err := m.IsLocked(ctx); !locked || err != nil {
			t.Fatalf("IsLocked = %v, %v", locked, err)
		}
		if ok, _ := mutex.New(e.Client(), e.Name).TryLock(ctx, 0); ok {
			t.Fatal("a second client acquired a held lock")
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if locked, _ := m.IsLocked(ctx); locked {
			t.Fatal("still locked after Unlock")
		}
		if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("second Unlock = %v, want ErrNotHeld", err)
		}
	})
	register("mutex/exclusion", func(t *testing.T, e *env) {
		var inside, worst atomic.Int32
		counter := 0
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			m := mutex.New(e.Client(), e.Name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 25 {
					if err := m.Lock(context.Background()); err != nil {
						errs <- err
						return
					}
					if n := inside.Add(1); n > worst.Load() {
						worst.Store(n)
					}
					counter++
					inside.Add(-1)
					if err := m.Unlock(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if worst.Load() != 1 || counter != 100 {
			t.Fatalf("max inside %d, counter %d; want 1 and 100", worst.Load(), counter)
		}
	})
	register("mutex/reentrant-owner", func(t *testing.T, e *env) {
		ctx := latchkey.WithOwner(context.Background())
		m := mutex.New(e.Client(), e.Name)
		for range 2 {
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := m.HoldCount(ctx); n != 2 || err != nil {
			t.Fatalf("HoldCount = %d, %v; want 2", n, err)
		}
		// Another process unlocks on the owner's behalf with its id.
		far := latchkey.WithOwnerID(context.Background(), latchkey.OwnerID(ctx))
		other := mutex.New(e.Client(), e.Name)
		if err := other.Unlock(far); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if locked, _ := m.IsLocked(ctx); locked {
			t.Fatal("still locked")
		}
	})
	register("mutex/lease-expiry", func(t *testing.T, e *env) {
		ctx := context.Background()
		m := mutex.New(e.Client(), e.Name, mutex.WithLease(200*time.Millisecond))
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		e.Advance(300 * time.Millisecond)
		other := mutex.New(e.Client(), e.Name)
		if ok, err := other.TryLock(ctx, 0); !ok || err != nil {
			t.Fatalf("TryLock after the lease = %v, %v", ok, err)
		}
		if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("Unlock after the lease = %v, want ErrNotHeld", err)
		}
		if err := other.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
	register("mutex/waiter-woken", func(t *testing.T, e *env) {
		ctx := context.Background()
		holder := mutex.New(e.Client(), e.Name)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- mutex.New(e.Client(), e.Name).Lock(ctx) }()
		time.Sleep(50 * time.Millisecond)
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		select { // far below the 30s watchdog TTL: woken by the message
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("waiter not woken by Unlock")
		}
	})
	register("mutex/force-unlock", func(t *testing.T, e *env) {
		ctx := context.Background()
		m := mutex.New(e.Client(), e.Name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, err := mutex.New(e.Client(), e.Name).ForceUnlock(ctx); !ok || err != nil {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
			t.Fatalf("Unlock after ForceUnlock = %v, want ErrNotHeld", err)
		}
	})
}
