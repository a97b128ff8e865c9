package mutex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// On a master with a replica, the replica has the hold when Lock returns.
// With the replica frozen, Lock fails with ErrNotReplicated soon after the
// sync timeout and leaves nothing behind, an Unlock is applied but says it
// was not replicated, and WithReplicaSync(0) does not wait at all.
func TestMutex_replicaSync(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := locktest.Client(t, master)
	rc := replica.Client(t)
	ctx := context.Background()

	name := lockName(t)
	m := mutex.New(c, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := rc.HLen(ctx, name).Result(); err != nil || n != 1 {
		t.Fatalf("replica has %d fields in the lock hash right after Lock (%v), want 1", n, err)
	}
	if tok, _ := rc.Get(ctx, "redisson_lock_token:{"+name+"}").Int64(); tok != m.Token() {
		t.Fatalf("replica's fencing counter = %d, Token() = %d", tok, m.Token())
	}

	replica.Freeze()
	defer replica.Thaw()
	const timeout = 300 * time.Millisecond
	err := m.Unlock(ctx)
	if !errors.Is(err, latchkey.ErrNotReplicated) {
		t.Fatalf("Unlock with the replica frozen = %v, want ErrNotReplicated", err)
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("an Unlock that was not replicated left the lock on the master")
	}
	if m.Err() != nil {
		t.Fatalf("Err() = %v after an Unlock applied on the master, want nil", m.Err())
	}

	other := lockName(t)
	synced := mutex.New(c, other, mutex.WithReplicaSync(timeout))
	start := time.Now()
	err = synced.Lock(ctx)
	took := time.Since(start)
	if !errors.Is(err, latchkey.ErrNotReplicated) {
		t.Fatalf("Lock with the replica frozen = %v, want ErrNotReplicated", err)
	}
	if took > timeout+time.Second {
		t.Fatalf("Lock failed %v after it started, more than a second past its %v sync timeout", took, timeout)
	}
	if n := c.Exists(ctx, other).Val(); n != 0 {
		t.Fatal("a Lock that was not replicated left the lock behind")
	}
	if synced.Token() != 0 {
		t.Fatalf("Token() = %d after a failed Lock", synced.Token())
	}

	unsynced := mutex.New(c, other, mutex.WithReplicaSync(0))
	start = time.Now()
	if err := unsynced.Lock(ctx); err != nil {
		t.Fatalf("Lock with replica sync off = %v", err)
	}
	if took := time.Since(start); took > timeout {
		t.Fatalf("Lock with replica sync off took %v: it waited for the frozen replica", took)
	}
	if err := unsynced.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// An Unlock that fails without an answer still ends the handle's hold and
// stops its renewal: the lock then expires with its lease on the server
// instead of being renewed forever.
func TestMutex_failedUnlockStopsRenewal(t *testing.T) {
	s := redistest.StartServer(t)
	c := s.Client(t, func(o *redis.Options) { o.ReadTimeout, o.MaxRetries = 100*time.Millisecond, -1 })
	latchkey.SetRideOut(c, 200*time.Millisecond)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(c, name, mutex.WithWatchdogTimeout(600*time.Millisecond))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// A server that answers nothing for longer than the ride-out: the
	// release goes unanswered, and whether it applied is unknown.
	s.Freeze()
	err := m.Unlock(ctx)
	s.Thaw()
	if err == nil {
		t.Fatal("Unlock against a frozen server = nil, want its error")
	}
	select {
	case <-m.Done():
	default:
		t.Fatal("Done not closed after a failed Unlock")
	}
	// Renewed, the key would outlive its 600ms lease indefinitely.
	deadline := time.Now().Add(3 * time.Second)
	for c.Exists(ctx, name).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("the lock was still there 3s after a failed Unlock: something renews it")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Fatalf("second Unlock = %v, want ErrNotHeld", err)
	}
}
