package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

func TestMutex_lease(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	m := mutex.New(client(t, s), name, mutex.WithLease(time.Second))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	done := m.Done()
	if ttl, _ := m.TTL(ctx); ttl <= 0 || ttl > time.Second {
		t.Fatalf("TTL = %v, want within the 1s lease", ttl)
	}

	other := mutex.New(client(t, s), name)
	start := time.Now()
	if ok, err := other.TryLock(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("competitor TryLock = %v, %v", ok, err)
	}
	t.Logf("competitor acquired %v after it began waiting", time.Since(start))
	defer other.Unlock(ctx)

	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Done not closed after the lease ended")
	}
	if err := m.Err(); !errors.Is(err, latchkey.ErrLost) {
		t.Errorf("Err = %v, want ErrLost", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
		t.Errorf("Unlock after the lease = %v, want ErrNotHeld", err)
	}
	if ok, _ := other.IsLocked(ctx); !ok {
		t.Error("the late Unlock released the competitor's lock")
	}
}

func TestMutex_watchdog(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	const timeout = time.Second
	m := mutex.New(client(t, s), name, mutex.WithWatchdogTimeout(timeout))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	other := mutex.New(client(t, s), name)
	minTTL := time.Hour
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		ttl := raw.PTTL(ctx, name).Val()
		minTTL = min(minTTL, ttl)
		if ok, err := other.TryLock(ctx, 0); ok || err != nil {
			t.Fatalf("competitor got in during a watchdog hold (err %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("lowest PTTL seen over 5s: %v", minTTL)
	if minTTL < timeout/3 {
		t.Errorf("PTTL fell to %v, below a third of the %v lease", minTTL, timeout)
	}
	select {
	case <-m.Done():
		t.Fatalf("hold reported ended: %v", m.Err())
	default:
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMutex_lossIsNeverSilent(t *testing.T) {
	for _, how := range []string{"del", "pexpire"} {
		t.Run(how, func(t *testing.T) {
			s := server(t)
			ctx := context.Background()
			name := lockName(t)
			raw := s.Client(t)
			const timeout = 900 * time.Millisecond
			m := mutex.New(client(t, s), name, mutex.WithWatchdogTimeout(timeout))
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if how == "del" {
				raw.Del(ctx, name)
			} else {
				raw.PExpire(ctx, name, time.Millisecond)
			}
			select {
			case <-m.Done():
				t.Logf("loss reported after %v", time.Since(start))
			case <-time.After(timeout/3 + time.Second):
				t.Fatal("loss not reported within a renewal period")
			}
			if !errors.Is(m.Err(), latchkey.ErrLost) {
				t.Fatalf("Err = %v, want ErrLost", m.Err())
			}
			// The handle must never write the key again.
			time.Sleep(timeout)
			if n := raw.Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("the lost hold's handle re-created the key: %v", raw.HGetAll(ctx, name).Val())
			}
			if err := m.Unlock(ctx); !errors.Is(err, latchkey.ErrNotHeld) {
				t.Fatalf("Unlock after loss = %v, want ErrNotHeld", err)
			}
		})
	}
}

// A hold whose validity runs out while its Unlock waits on a server that
// answers nothing is told lost then, not when the Unlock's answer comes:
// its holder must stop relying on it (election.Resign documents this).
func TestMutex_lossToldWhileUnlocking(t *testing.T) {
	for _, opt := range []struct {
		name string
		opt  mutex.Option
	}{
		{"watchdog", mutex.WithWatchdogTimeout(600 * time.Millisecond)},
		{"lease", mutex.WithLease(600 * time.Millisecond)},
	} {
		t.Run(opt.name, func(t *testing.T) {
			s := redistest.StartServer(t)
			ctx := context.Background()
			m := mutex.New(s.Client(t), lockName(t), opt.opt)
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			s.Freeze()
			defer s.Thaw()
			unlocked := make(chan error, 1)
			go func() { unlocked <- m.Unlock(ctx) }()
			select {
			case <-m.Done():
			case err := <-unlocked:
				t.Fatalf("Unlock against a frozen server returned %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the hold's validity ran out while its Unlock waited, and it was not told lost")
			}
			if !errors.Is(m.Err(), latchkey.ErrLost) {
				t.Errorf("Err = %v, want ErrLost", m.Err())
			}
			select {
			case err := <-unlocked:
				t.Fatalf("Unlock returned %v with the server still frozen", err)
			default:
			}
			s.Thaw()
			// The server expired the key meanwhile, or the release got there
			// first: either answer is right, and the loss stays.
			if err := <-unlocked; err != nil && !errors.Is(err, latchkey.ErrNotHeld) {
				t.Errorf("Unlock once thawed = %v, want nil or ErrNotHeld", err)
			}
			if !errors.Is(m.Err(), latchkey.ErrLost) {
				t.Errorf("Err after the Unlock = %v, want the loss", m.Err())
			}
		})
	}
}

// TestMutex_holderCrash SIGKILLs a child process that holds the lock: a
// waiter gets it within the lease, plus a little.
func TestMutex_holderCrash(t *testing.T) {
	if redistest.IsChild() {
		return // run by TestMutex_crashChild's parent only
	}
	s := server(t)
	name := lockName(t)
	const lease = 2 * time.Second
	child := redistest.StartChild(t, "TestMutex_crashChild",
		"LATCHKEY_ADDR="+s.Addr(), "LATCHKEY_NAME="+name, "LATCHKEY_WATCHDOG="+lease.String())
	child.WaitLine(t, "LOCKED", 30*time.Second)

	m := mutex.New(client(t, s), name)
	got := make(chan time.Time, 1)
	go func() {
		if err := m.Lock(context.Background()); err == nil {
			got <- time.Now()
		}
		close(got)
	}()
	time.Sleep(200 * time.Millisecond) // the waiter is blocked behind the child
	killed := time.Now()
	child.Kill()
	select {
	case at, ok := <-got:
		if !ok {
			t.Fatal("Lock failed")
		}
		waited := at.Sub(killed)
		t.Logf("acquired %v after the holder was killed (lease %v)", waited, lease)
		if waited > lease+300*time.Millisecond {
			t.Errorf("waited %v, more than the lease plus 300ms", waited)
		}
	case <-time.After(lease + 5*time.Second):
		t.Fatal("waiter never acquired the crashed holder's lock")
	}
	_ = m.Unlock(context.Background())
}

// TestMutex_crashChild is the child of TestMutex_holderCrash and
// TestMutex_fencingAcrossProcesses: it locks, prints LOCKED <token>, and
// then waits to be killed, or unlocks if LATCHKEY_UNLOCK is set.
func TestMutex_crashChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("helper process for TestMutex_holderCrash")
	}
	wd, _ := time.ParseDuration(os.Getenv("LATCHKEY_WATCHDOG"))
	if wd == 0 {
		wd = mutex.DefaultWatchdogTimeout
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("LATCHKEY_ADDR")})
	m := mutex.New(c, os.Getenv("LATCHKEY_NAME"), mutex.WithWatchdogTimeout(wd))
	if err := m.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Println("LOCKED " + strconv.FormatInt(m.Token(), 10))
	if os.Getenv("LATCHKEY_UNLOCK") != "" {
		if err := m.Unlock(context.Background()); err != nil {
			t.Fatal(err)
		}
		fmt.Println("UNLOCKED")
		return
	}
	time.Sleep(time.Minute)
}

// TestMutex_deadWaiterCostsAtMostTheGrace: the first waiter in line dies
// (a child process SIGKILLed while queued, just before the release). Its
// client's connections are gone, so no connection hears its letter: the
// release drops it and grants the lock to the next waiter at once. (A
// waiter whose client still listens but never reads the letter costs the
// grace: TestGrant_unreadLetter.)
func TestMutex_deadWaiterCostsAtMostTheGrace(t *testing.T) {
	if redistest.IsChild() {
		return
	}
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	queue := "latchkey_lock_queue:{" + name + "}"
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	child := redistest.StartChild(t, "TestMutex_waitChild", "LATCHKEY_ADDR="+s.Addr(), "LATCHKEY_NAME="+name)
	child.WaitLine(t, "WAITING", 30*time.Second)
	waitQueue(t, raw, queue, 1)

	next := mutex.New(client(t, s), name)
	got := make(chan time.Time, 1)
	go func() {
		if next.Lock(ctx) == nil {
			got <- time.Now()
		}
		close(got)
	}()
	waitQueue(t, raw, queue, 2)
	child.Kill()
	released := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case at, ok := <-got:
		if !ok {
			t.Fatal("Lock failed")
		}
		d := at.Sub(released)
		t.Logf("the next waiter acquired %v after the release (grace %v)", d, handoff.Grace)
		if d > handoff.Grace+2*time.Second {
			t.Errorf("a dead first waiter held things up for %v", d)
		}
		if fields := raw.HKeys(ctx, name).Val(); len(fields) != 1 {
			t.Errorf("lock hash = %v, want the next waiter alone", fields)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never acquired")
	}
	_ = next.Unlock(ctx)
}

func waitQueue(t *testing.T, c *redis.Client, queue string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.LLen(context.Background(), queue).Val() < n {
		if time.Now().After(deadline) {
			t.Fatalf("queue %s never reached %d waiters", queue, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestMutex_waitChild is the child of TestMutex_deadWaiterCostsAtMostTheGrace:
// it prints WAITING and blocks in Lock until killed.
func TestMutex_waitChild(t *testing.T) {
	if !redistest.IsChild() {
		t.Skip("helper process for TestMutex_deadWaiterCostsAtMostTheGrace")
	}
	c := redis.NewClient(&redis.Options{Addr: os.Getenv("LATCHKEY_ADDR")})
	fmt.Println("WAITING")
	_ = mutex.New(c, os.Getenv("LATCHKEY_NAME")).Lock(context.Background())
	time.Sleep(time.Minute)
}
