package mutex_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// evalCounter counts the scripts a client runs.
type evalCounter struct{ n atomic.Int64 }

func (e *evalCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (e *evalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (e *evalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.HasPrefix(strings.ToLower(cmd.Name()), "eval") {
			e.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// A free lock costs one script call to take and one to release; a holder
// that took the lock free, and whose release finds that a waiter queued
// since, hands the lock on all the same, one call later, and its handle
// releases the full way while its releases find waiters.
func TestMutex_fastPaths(t *testing.T) {
	srv := server(t)
	c := client(t, srv)
	ctx := context.Background()
	if err := latchkey.Preload(ctx, c); err != nil { // no NOSCRIPT, and no EVAL after it, below
		t.Fatal(err)
	}
	var evals evalCounter
	c.AddHook(&evals)
	name := lockName(t)
	m := mutex.New(c, name, mutex.WithLease(10*time.Second))
	for range 3 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := evals.n.Load(); n != 6 {
		t.Errorf("3 uncontended Lock+Unlock sent %d scripts, want 6", n)
	}

	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	other := mutex.New(client(t, srv), name, mutex.WithLease(10*time.Second))
	got := make(chan error, 1)
	go func() { got <- other.Lock(ctx) }()
	// The waiter queues: the queue's deadlines key exists.
	queued(t, c, keys.LockOf(name))
	before := evals.n.Load()
	start := time.Now()
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	handedOn(t, got)
	t.Logf("handed on in %v", time.Since(start))
	if n := evals.n.Load() - before; n != 2 {
		t.Errorf("the release sent %d scripts, want 2 (the fast one, then the one that hands on)", n)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// The handle learned that its lock is contended: the next hold that
	// finds it free, and a waiter queued behind, is released in one call.
	// A full release that finds nobody queued puts the fast one back.
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { got <- other.Lock(ctx) }()
	queued(t, c, keys.LockOf(name))
	before = evals.n.Load()
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	handedOn(t, got)
	if n := evals.n.Load() - before; n != 1 {
		t.Errorf("a contended handle's release sent %d scripts, want 1", n)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	alone := &scriptCounter{sha: scripts.Get("mutex_release_alone").Hash()}
	c.AddHook(alone)
	for range 2 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := alone.n.Load(); n != 1 {
		t.Errorf("after a full release found nobody queued, %d of 2 releases went the fast way, want 1 (the second)", n)
	}
}

// A resent first try of a plain Lock finds the lock taken by its first
// send, and answers as that did; another owner's try finds it held.
func TestMutex_takeFreeResent(t *testing.T) {
	c := client(t, server(t))
	ctx := context.Background()
	name := lockName(t)
	try := func(owner string) []int64 {
		t.Helper()
		take := scripts.MutexTakeFree{Lock: keys.LockOf(name), Owner: owner, Lease: 10 * time.Second}
		vs, err := scripts.Ints(rt.Of(c).Sender(nil, 0).Send(ctx, take.Request()).Cmd)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	first := try("a:1")
	again := try("a:1")
	if len(first) != 3 || first[0] != 1 || fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("first send %v, resend %v; want {1, token, 1} both times", first, again)
	}
	if other := try("b:1"); len(other) != 2 || other[0] != 0 || other[1] <= 0 || other[1] > 10000 {
		t.Fatalf("another owner's try = %v, want {0, the holder's pttl}", other)
	}
	if n := c.HGet(ctx, name, "a:1").Val(); n != "1" {
		t.Fatalf("hold count %q after a resent take, want 1", n)
	}
}

// scriptCounter counts the calls a client makes of one script.
type scriptCounter struct {
	sha string
	n   atomic.Int64
}

func (s *scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (s *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); len(args) > 1 && args[1] == s.sha {
			s.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// Every hold that found the lock free is released the lone way, a new
// handle's first and an owner's, re-entered or not.
func TestMutex_freeHoldsReleaseAlone(t *testing.T) {
	c := client(t, server(t))
	if err := latchkey.Preload(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	alone := &scriptCounter{sha: scripts.Get("mutex_release_alone").Hash()}
	full := &scriptCounter{sha: scripts.Get("mutex_release").Hash()}
	c.AddHook(alone)
	c.AddHook(full)
	name := lockName(t)
	for range 3 { // a new handle per Lock
		m := mutex.New(c, name, mutex.WithLease(10*time.Second))
		if err := m.Lock(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx := latchkey.WithOwner(context.Background())
	m := mutex.New(c, name, mutex.WithLease(10*time.Second))
	for range 2 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a, f := alone.n.Load(), full.n.Load(); a != 5 || f != 0 {
		t.Errorf("releases: %d lone, %d full; want 5 lone, 0 full", a, f)
	}
	if n := c.Exists(context.Background(), name).Val(); n != 0 {
		t.Errorf("the lock exists after every hold was released")
	}
}

// An owner whose lone release finds a waiter queued takes one hold down
// the full way, once: the lone request records that it did nothing, so a
// copy of it that arrives after the queue emptied does nothing either.
func TestMutex_ownerAloneFindsQueue(t *testing.T) {
	srv := server(t)
	c := client(t, srv)
	name := lockName(t)
	ctx := latchkey.WithOwner(context.Background())
	m := mutex.New(c, name, mutex.WithLease(10*time.Second))
	for range 2 {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	other := mutex.New(client(t, srv), name, mutex.WithLease(10*time.Second))
	got := make(chan error, 1)
	go func() { got <- other.Lock(context.Background()) }()
	l := keys.LockOf(name)
	queued(t, c, l)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	id := latchkey.OwnerID(ctx)
	if n := c.HGet(context.Background(), name, id).Val(); n != "1" {
		t.Fatalf("owner's holds after one Unlock = %q, want 1", n)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	handedOn(t, got)
	if err := other.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The lone request, resent after the queue emptied, replays "did
	// nothing" and leaves the owner's holds as they are. The second send
	// stands for a resend on a client that resends without a pause, so
	// that its record stays where the first send wrote it.
	c = srv.Client(t, func(o *redis.Options) { o.MinRetryBackoff = -1 })
	c.HSet(context.Background(), name, "o:1", 2)
	c.ZAdd(context.Background(), l.Deadlines, redis.Z{Score: 1, Member: "w"})
	rec := keys.Once(name, "req-1")
	req := scripts.MutexReleaseAlone{Lock: l, Owner: "o:1", Lease: 10 * time.Second, Reentrant: true, Record: rec}
	send := func() int64 {
		t.Helper()
		n, err := scripts.Int(rt.Of(c).Sender(nil, 0).Send(context.Background(), req.Request()).Cmd)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := send(); n != scripts.ReleaseQueued {
		t.Fatalf("lone release with a waiter queued = %d, want %d", n, scripts.ReleaseQueued)
	}
	c.Del(context.Background(), l.Deadlines)
	if n := send(); n != scripts.ReleaseQueued {
		t.Errorf("its resend after the queue emptied = %d, want %d, replayed", n, scripts.ReleaseQueued)
	}
	if n := c.HGet(context.Background(), name, "o:1").Val(); n != "2" {
		t.Errorf("owner's holds after the resend = %q, want 2", n)
	}
}

// An owner's first try is recorded: a resend answers as the first send
// did, without a second hold. An owner that holds the lock already,
// through another handle, is left to the full acquisition, and re-enters.
func TestMutex_ownerTakeFree(t *testing.T) {
	c := client(t, server(t))
	ctx := context.Background()
	name := lockName(t)
	l := keys.LockOf(name)
	take := scripts.MutexTakeOwner{Lock: l, Owner: "o:1", Lease: 10 * time.Second, Record: keys.Once(name, "req-1")}
	try := func(req scripts.Request) []int64 {
		t.Helper()
		vs, err := scripts.Ints(rt.Of(c).Sender(nil, 0).Send(ctx, req).Cmd)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	if first := try(take.Request()); len(first) != 3 || first[0] != 1 || first[2] != 1 {
		t.Fatalf("first send %v, want {1, token, 1}", first)
	}
	if again := try(take.Request()); len(again) != 1 || again[0] != scripts.TakeOwnerNot {
		t.Fatalf("resend %v, want {%d}: the full acquisition replays it", again, scripts.TakeOwnerNot)
	}
	acq := scripts.MutexAcquire{Lock: l, Owner: "o:1", Entry: "h/k", Lease: 10 * time.Second, Reentry: scripts.Reentrant, Record: take.Record}
	if vs := try(acq.Request()); len(vs) != 3 || vs[0] != 1 || vs[2] != 1 {
		t.Fatalf("the full acquisition under the same record = %v, want {1, token, 1}, replayed", vs)
	}
	if n := c.HGet(ctx, name, "o:1").Val(); n != "1" {
		t.Fatalf("hold count %q after a resent take, want 1", n)
	}
	take.Record = keys.Once(name, "req-2")
	if vs := try(take.Request()); len(vs) != 1 || vs[0] != scripts.TakeOwnerNot {
		t.Fatalf("a new try of the holding owner = %v, want {%d}", vs, scripts.TakeOwnerNot)
	}

	owned := latchkey.WithOwner(ctx)
	a := mutex.New(c, lockName(t), mutex.WithLease(10*time.Second))
	b := mutex.New(c, a.Name(), mutex.WithLease(10*time.Second))
	if err := a.Lock(owned); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.TryLock(owned, 0); !ok || err != nil {
		t.Fatalf("the owner's TryLock through another handle = %v, %v; want it re-entered", ok, err)
	}
	if n := c.HGet(ctx, a.Name(), latchkey.OwnerID(owned)).Val(); n != "2" {
		t.Errorf("owner's holds = %q, want 2", n)
	}
	for _, m := range []*mutex.Mutex{b, a} {
		if err := m.Unlock(owned); err != nil {
			t.Fatal(err)
		}
	}
}

// queued waits up to 5s for a waiter to queue for l: its deadlines key
// exists.
func queued(t *testing.T, c redis.UniversalClient, l keys.Lock) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); c.Exists(context.Background(), l.Deadlines).Val() == 0; {
		if time.Now().After(end) {
			t.Fatal("the waiter never queued")
		}
		time.Sleep(time.Millisecond)
	}
}

// handedOn waits for the waiter's Lock, which a release hands the lock.
func handedOn(t *testing.T, got <-chan error) {
	t.Helper()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not handed the lock within 5s of the release (its lease is 10s)")
	}
}
