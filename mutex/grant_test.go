package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/handoff"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// A release grants the lock to the waiter at the head of the queue: the
// waiter returns from Lock on the release's letter, without a command of
// its own, holding the lock as an ordinary Redisson owner with a fresh
// token; and the waiter extends the grant's short lease to its own soon
// after. (Nobody listens on Redisson's channel: with a Redisson waiter
// there, the release yields instead, see TestMutex_redissonWaiterServed.)
func TestGrant_oneTrip(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	a := mutex.New(client(t, s), name)
	var sent locktest.Commands
	bc := client(t, s)
	bc.AddHook(&sent)
	b := mutex.New(bc, name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Lock(ctx) }()
	waitForWaiter(t, raw, name)
	time.Sleep(20 * time.Millisecond) // b asleep, its attempts over
	before := sent.N()
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := sent.N() - before; n != 0 {
		t.Errorf("the granted waiter sent %d commands before Lock returned, want 0", n)
	}
	if b.Token() <= a.Token() {
		t.Errorf("granted token %d, want above the releaser's %d", b.Token(), a.Token())
	}
	fields := raw.HGetAll(ctx, name).Val()
	if len(fields) != 1 {
		t.Fatalf("lock hash after the grant = %v, want one owner", fields)
	}
	for _, count := range fields {
		if count != "1" {
			t.Errorf("granted hold count = %s, want 1", count)
		}
	}
	time.Sleep(handoff.Grace) // past TakeAfter, and past the grant's lease
	if ttl := raw.PTTL(ctx, name).Val(); ttl < 20*time.Second {
		t.Errorf("PTTL %v after the grace: the grant was not extended to the 30s lease", ttl)
	}
	select {
	case <-b.Done():
		t.Fatalf("granted hold lost: %v", b.Err())
	default:
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

const wait2s = 2 * time.Second

// A waiter that gives up while a grant is on its way gives the lock back:
// whatever the timing of a cancellation against the release, the lock is
// never left to a waiter whose Lock failed, and the next waiter gets it.
func TestGrant_givenUp(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	ctx := context.Background()
	a := mutex.New(client(t, s), name)
	b := mutex.New(client(t, s), name)
	c := mutex.New(client(t, s), name)
	rng := rand.New(rand.NewPCG(1, 2))
	granted, gaveUp := 0, 0
	for range 40 {
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		bctx, cancel := context.WithCancel(ctx)
		bdone := make(chan error, 1)
		go func() { bdone <- b.Lock(bctx) }()
		waitQueue(t, raw, "latchkey_lock_queue:{"+name+"}", 1)
		cdone := make(chan error, 1)
		go func() { cdone <- c.Lock(ctx) }()
		waitQueue(t, raw, "latchkey_lock_queue:{"+name+"}", 2)
		// Cancel b around the release: before, during or after its grant.
		delay := time.Duration(rng.IntN(400)) * time.Microsecond
		go func() {
			time.Sleep(delay)
			cancel()
		}()
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		berr := <-bdone
		cancel()
		if berr == nil {
			granted++
			if err := b.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			gaveUp++
			if !errors.Is(berr, context.Canceled) {
				t.Fatalf("b's Lock = %v, want context.Canceled", berr)
			}
		}
		select {
		case err := <-cdone:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(handoff.Grace + wait2s): // a give-back cut off costs the grace
			t.Fatalf("c not served within the grace and 2s (b granted %v)", berr == nil)
		}
		if f := raw.HKeys(ctx, name).Val(); len(f) != 1 {
			t.Fatalf("lock hash while c holds = %v, want c alone", f)
		}
		if err := c.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("b acquired %d times and gave up %d times", granted, gaveUp)
	if gaveUp == 0 {
		t.Error("b never gave up: the test did not race cancellation against the grant")
	}
}

// Fencing tokens strictly increase along a chain of grants between many
// clients, half of them reentrant owners, and no two hold at once.
func TestGrant_tokensIncrease(t *testing.T) {
	s := server(t)
	name := lockName(t)
	const clients, rounds = 6, 30
	var (
		inside atomic.Int32
		last   atomic.Int64
		errs   = make(chan error, clients)
	)
	for i := range clients {
		m := mutex.New(client(t, s), name)
		ctx := context.Background()
		if i%2 == 0 {
			ctx = latchkey.WithOwner(ctx)
		}
		go func() {
			for range rounds {
				if err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					errs <- errors.New("two holders")
				}
				if tok := m.Token(); tok <= last.Load() {
					errs <- fmt.Errorf("token %d after %d", tok, last.Load())
				} else {
					last.Store(tok)
				}
				time.Sleep(200 * time.Microsecond)
				inside.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the clients did not finish within a minute")
		}
	}
}

// An owner granted the lock that re-enters at once, before its grant was
// extended, counts two holds: the re-entry is not taken for the grant.
func TestGrant_thenReenter(t *testing.T) {
	s := server(t)
	name := lockName(t)
	raw := s.Client(t)
	ctx := context.Background()
	a := mutex.New(client(t, s), name)
	b := mutex.New(client(t, s), name)
	own := latchkey.WithOwner(ctx)
	for range 10 {
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- b.Lock(own) }()
		waitQueue(t, raw, "latchkey_lock_queue:{"+name+"}", 1)
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := b.Lock(own); err != nil {
			t.Fatal(err)
		}
		if n, err := b.HoldCount(own); n != 2 || err != nil {
			t.Fatalf("HoldCount after a grant and a re-entry = %d, %v; want 2", n, err)
		}
		for range 2 {
			if err := b.Unlock(own); err != nil {
				t.Fatal(err)
			}
		}
		if ok, _ := b.IsLocked(ctx); ok {
			t.Fatal("still locked after two unlocks")
		}
	}
}

// A grant whose letter is heard but never read (the waiter gave up, and
// its client still listens) is never taken: the next waiter, told that it
// is next, takes the lock once the grace is over, not sooner.
func TestGrant_unreadLetter(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	listener := s.Client(t)
	hub := "latchkey_lock__channel:{" + name + "}:gone"
	sub := listener.Subscribe(ctx, hub)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// A queue entry of a waiter that left without a word, as a fault
	// would leave it: its Hub still listens.
	queue, deadlines := "latchkey_lock_queue:{"+name+"}", "latchkey_lock_timeout:{"+name+"}"
	gone := "gone/" + uuid.NewString() + ":1"
	raw.RPush(ctx, queue, gone)
	raw.ZAdd(ctx, deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: gone})
	next := mutex.New(client(t, s), name)
	done := make(chan time.Time, 1)
	go func() {
		if next.Lock(ctx) == nil {
			done <- time.Now()
		}
		close(done)
	}()
	waitQueue(t, raw, queue, 2)
	time.Sleep(20 * time.Millisecond)
	released := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || !strings.HasPrefix(msg.Payload, "@"+gone[len("gone/"):]+" ") {
		t.Fatalf("letter to the gone waiter = %v, %v", msg, err)
	}
	select {
	case at, ok := <-done:
		if !ok {
			t.Fatal("the next waiter's Lock failed")
		}
		d := at.Sub(released)
		t.Logf("the next waiter acquired %v after the release granted the lock to a waiter that never read its letter", d)
		if d < handoff.Grace-10*time.Millisecond || d > handoff.Grace+wait2s {
			t.Errorf("the next waiter acquired %v after the release, want about the grace (%v)", d, handoff.Grace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never acquired")
	}
	if fields := raw.HKeys(ctx, name).Val(); len(fields) != 1 {
		t.Errorf("lock hash = %v, want the next waiter alone", fields)
	}
	_ = next.Unlock(ctx)
}

// A grant to an earlier Lock call of an owner, which gave up without a
// word (its queue entry stayed), is taken by the owner's next Lock as its
// own acquisition, not counted as a re-entry on top of it: one Unlock
// frees the lock.
func TestGrant_staleEntryOfOwner(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	name := lockName(t)
	raw := s.Client(t)
	own := latchkey.WithOwner(ctx)
	id := latchkey.OwnerID(own)
	listener := s.Client(t) // the old call's client still listens
	sub := listener.Subscribe(ctx, "latchkey_lock__channel:{"+name+"}:old")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	holder := mutex.New(client(t, s), name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	stale := "old/" + id + "/" + uuid.NewString()
	raw.RPush(ctx, "latchkey_lock_queue:{"+name+"}", stale)
	raw.ZAdd(ctx, "latchkey_lock_timeout:{"+name+"}", redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: stale})
	if err := holder.Unlock(ctx); err != nil { // grants the lock to the stale entry
		t.Fatal(err)
	}
	if n := raw.HGet(ctx, name, id).Val(); n != "1" {
		t.Fatalf("the release did not grant the lock to the stale entry (count %q)", n)
	}
	m := mutex.New(client(t, s), name)
	if err := m.Lock(own); err != nil {
		t.Fatal(err)
	}
	if n, err := m.HoldCount(own); n != 1 || err != nil {
		t.Fatalf("HoldCount = %d, %v; want 1: the stale grant counted as a re-entry", n, err)
	}
	if err := m.Unlock(own); err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.IsLocked(ctx); ok {
		t.Fatal("still locked after the owner's one Unlock")
	}
}

// A client listening on Redisson's channel by a pattern (a latchkey
// watch) waits for nothing: a release it hears does not give Redisson's
// waiters a place in the queue, which would make a later release leave
// the lock free for them (handoff.Yield) instead of granting it.
func TestGrant_patternListenerIsNoWaiter(t *testing.T) {
	s := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	name := lockName(t)
	raw := s.Client(t)
	watch := raw.PSubscribe(ctx, "redisson_lock__channel:{"+name+"}")
	defer watch.Close()
	if _, err := watch.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	a, b, c := mutex.New(client(t, s), name), mutex.New(client(t, s), name), mutex.New(client(t, s), name)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	queue := "latchkey_lock_queue:{" + name + "}"
	got := make(chan error, 2)
	go func() { got <- b.Lock(ctx) }()
	waitForWaiter(t, raw, name)
	go func() { got <- c.Lock(ctx) }()
	for raw.LLen(ctx, queue).Val() < 2 {
		if ctx.Err() != nil {
			t.Fatal("c never queued behind b")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if q := raw.LRange(ctx, queue, 0, -1).Val(); slices.Contains(q, "redisson") {
		t.Errorf("queue after a release heard by a pattern listener = %q: Redisson's waiters placed", q)
	}
	for _, m := range []*mutex.Mutex{b, c} {
		_ = m.Unlock(ctx)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
