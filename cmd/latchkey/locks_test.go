package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// A waiter is a goroutine blocked in a Lock until it acquires or stop.
type waiter struct {
	got    chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// wait starts lock in a goroutine; once acquired it holds until stop,
// then unlocks.
func wait(lock, unlock func(context.Context) error) *waiter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &waiter{got: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if lock(ctx) != nil {
			return
		}
		close(w.got)
		<-ctx.Done()
		_ = unlock(context.Background())
	}()
	return w
}

func (w *waiter) stop() { w.cancel(); <-w.done }

// queued waits until the list key holds n entries.
func queued(t *testing.T, rdb redis.UniversalClient, key string, n int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d entries in %s", n, key), func() bool {
		return rdb.LLen(context.Background(), key).Val() == n
	})
}

func TestCLI(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	t.Run("mutex", func(t *testing.T) { testMutex(t, c, rdb) })
	t.Run("fairlock", func(t *testing.T) { testFairLock(t, c, rdb) })
	t.Run("rwlock", func(t *testing.T) { testRWLock(t, c, rdb) })
	t.Run("tokens", func(t *testing.T) { testTokens(t, c, rdb) })
	t.Run("token per holder", func(t *testing.T) { testTokenPerHolder(t, c, rdb) })
	t.Run("holder liveness", func(t *testing.T) { testHolderLiveness(t, c, rdb) })
	t.Run("election", func(t *testing.T) { testElection(t, c, rdb) })
	t.Run("counters", func(t *testing.T) { testCounters(t, c, rdb) })
	t.Run("redisson", func(t *testing.T) { testRedisson(t, c, rdb) })
	t.Run("ls", func(t *testing.T) { testLs(t, c, rdb) })
	t.Run("watch", func(t *testing.T) { testWatch(t, c, rdb) })
	t.Run("watch-json", func(t *testing.T) { testWatchJSON(t, c, rdb) })
	t.Run("usage", func(t *testing.T) { testUsage(t, c) })
	t.Run("cluster", func(t *testing.T) { testCluster(t, c.bin) })
	t.Run("awkward name", func(t *testing.T) { testAwkwardName(t, c, rdb) })
	t.Run("exit codes", func(t *testing.T) { testExitCodes(t, c, rdb) })
	t.Run("refusals", func(t *testing.T) { testRefusals(t, c, rdb) })
	t.Run("unlock names the holder", func(t *testing.T) { testUnlockNamesHolder(t, c, rdb) })
	t.Run("evict", func(t *testing.T) { testEvict(t, c, rdb) })
	t.Run("release", func(t *testing.T) { testRelease(t, c, rdb) })
	t.Run("countdown", func(t *testing.T) { testCountdown(t, c, rdb) })
	t.Run("clear", func(t *testing.T) { testClear(t, c, rdb) })
	t.Run("hidden", func(t *testing.T) { testHidden(t, c, srv) })
	t.Run("liveness", func(t *testing.T) { testLiveness(t, c, rdb) })
	t.Run("permit totals", func(t *testing.T) { testPermitTotals(t, c, rdb) })
	t.Run("kinds", func(t *testing.T) { testKinds(t, c, rdb) })
	t.Run("leftovers", func(t *testing.T) { testLeftovers(t, c, rdb) })
}

// A name with an unbalanced brace is served on a single server, as the
// library serves it.
func testAwkwardName(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := "a}b" + testName(t, "cli")
	m := mutex.New(rdb, name)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, name); st.Kind != kindMutex || len(st.Holders) != 1 {
		t.Fatalf("inspect %q: %+v", name, st)
	}
	if out, errOut, code := c.run(t, "unlock", "-yes", name); code != 0 || !strings.Contains(out, "force-unlocked") {
		t.Fatalf("unlock %q: exit %d: %s%s", name, code, out, errOut)
	}
	if locked, err := m.IsLocked(t.Context()); locked || err != nil {
		t.Fatalf("IsLocked after the CLI's unlock = %v, %v", locked, err)
	}
}

func testMutex(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "cli")
	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	queue := namesOf(name).lock.Queue
	var ws []*waiter
	for i := range 2 {
		h := mutex.New(rdb, name)
		ws = append(ws, wait(h.Lock, h.Unlock))
		queued(t, rdb, queue, int64(i+1))
	}
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()

	st := c.inspect(t, name)
	if st.Kind != kindMutex || len(st.Holders) != 1 || st.Holders[0].Count != 1 || st.Holders[0].Client != "latchkey" {
		t.Fatalf("inspect: %+v", st)
	}
	if st.Token == nil || *st.Token != m.Token() {
		t.Errorf("token %v, want %d", st.Token, m.Token())
	}
	if st.TTLms <= 0 || st.TTLms > 30000 {
		t.Errorf("ttl_ms %d", st.TTLms)
	}
	if len(st.Queue) != 2 || st.Queue[0].Owner == st.Queue[1].Owner || st.Queue[0].InMs <= 0 {
		t.Fatalf("queue %+v", st.Queue)
	}
	want := rdb.LRange(ctx, queue, 0, -1).Val()
	for i, q := range st.Queue {
		if entryOwner(want[i]) != q.Owner {
			t.Errorf("queue[%d] = %s, want the owner of %s", i, q.Owner, want[i])
		}
	}

	table, _, _ := c.run(t, "inspect", name)
	for _, want := range []string{"mutex", "HOLDER", st.Holders[0].Owner, "WAITER", st.Queue[1].Owner} {
		if !strings.Contains(table, want) {
			t.Errorf("inspect's table lacks %q:\n%s", want, table)
		}
	}
	t.Logf("inspect:\n%s", table)
	raw, _, _ := c.run(t, "inspect", "-json", name)
	t.Logf("inspect -json:\n%s", raw)

	// Without -yes and no terminal, unlock refuses.
	if _, errOut, code := c.run(t, "unlock", name); code != exitNotConfirmed {
		t.Fatalf("unlock without -yes: exit %d (%s), want 5", code, errOut)
	}
	if ok, _ := m.IsLocked(ctx); !ok {
		t.Fatal("unlock without -yes unlocked")
	}
	out, errOut, code := c.run(t, "unlock", "-yes", name)
	if code != 0 {
		t.Fatalf("unlock -yes: exit %d: %s", code, errOut)
	}
	t.Log(out)
	select { // the first waiter in line is woken: granted the lock
	case <-ws[0].got:
	case <-time.After(5 * time.Second):
		t.Fatal("the first waiter did not get the lock after unlock")
	}
	if st := c.inspect(t, name); len(st.Holders) != 1 || st.Holders[0].Owner != entryOwner(want[0]) || len(st.Queue) != 1 {
		t.Errorf("after unlock: %+v", st)
	}
	if err := m.Unlock(ctx); err == nil {
		t.Error("the force-unlocked holder could still unlock")
	}
}

func testFairLock(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "cli")
	f := fairlock.New(rdb, name)
	if err := f.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Unlock(context.Background()) }()
	var ws []*waiter
	for i := range 3 {
		h := fairlock.New(rdb, name)
		ws = append(ws, wait(h.Lock, h.Unlock))
		queued(t, rdb, namesOf(name).lock.FairQueue, int64(i+1))
	}
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()
	st := c.inspect(t, name)
	want := rdb.LRange(t.Context(), namesOf(name).lock.FairQueue, 0, -1).Val()
	if st.Kind != kindFairLock || len(st.Holders) != 1 || len(st.Queue) != 3 {
		t.Fatalf("inspect: %+v", st)
	}
	for i, q := range st.Queue {
		if q.Owner != want[i] || q.Client != "latchkey" || q.DeadlineMs <= time.Now().UnixMilli() {
			t.Errorf("queue[%d] = %+v, want owner %s with a deadline ahead", i, q, want[i])
		}
	}
}

func testRWLock(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "cli")
	var readers []*rwlock.RWMutex
	for range 2 {
		rw := rwlock.New(rdb, name)
		if err := rw.RLock(t.Context()); err != nil {
			t.Fatal(err)
		}
		readers = append(readers, rw)
	}
	defer func() {
		for _, rw := range readers {
			_ = rw.RUnlock(context.Background())
		}
	}()
	st := c.inspect(t, name)
	if st.Kind != kindRWLock || st.Mode != "read" || len(st.Holders) != 2 {
		t.Fatalf("inspect: %+v", st)
	}
	for _, h := range st.Holders {
		if h.Mode != "read" || h.Count != 1 || h.TTLms == nil || *h.TTLms <= 0 {
			t.Errorf("reader %+v", h)
		}
	}
	// A writer waits: it shows in the queue.
	w := rwlock.New(rdb, name)
	ww := wait(w.Lock, w.Unlock)
	defer ww.stop()
	eventually(t, "a waiting writer", func() bool {
		return rdb.ZCard(context.Background(), namesOf(name).rw.Writers).Val() == 1
	})
	if st := c.inspect(t, name); len(st.Queue) != 1 || st.Queue[0].Mode != "write" {
		t.Errorf("queue with a writer: %+v", st.Queue)
	}
}
