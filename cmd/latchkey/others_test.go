package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

func testCounters(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	sem := testName(t, "sem")
	s := semaphore.New(rdb, sem)
	if _, err := s.TrySetPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, sem); st.Kind != kindCounter {
		t.Errorf("undetected plain integer: kind %q", st.Kind)
	}
	if st := c.inspect(t, sem, "-kind", "semaphore"); st.Kind != kindSemaphore || st.Permits == nil || *st.Permits != 3 || st.Count != nil {
		t.Errorf("semaphore: %+v", st)
	}
	// A grant not taken yet, as a release leaves it for a waiter: shown
	// with its permits, its waiter and the end of its grace.
	layout := namesOf(sem).sem
	end := time.Now().Add(100 * time.Millisecond).UnixMilli()
	if err := rdb.ZAdd(ctx, layout.Grants, redis.Z{Score: float64(end), Member: "hub/2/waiter-key"}).Err(); err != nil {
		t.Fatal(err)
	}
	st := c.inspect(t, sem, "-kind", "semaphore")
	if len(st.Grants) != 1 || st.Grants[0].Owner != "waiter-key" || st.Grants[0].Permits != 2 || st.Grants[0].DeadlineMs != end {
		t.Errorf("semaphore grants: %+v, want 2 permits to waiter-key until %d", st.Grants, end)
	}
	rdb.Del(ctx, layout.Grants)

	pes := testName(t, "pes")
	ps := permitsemaphore.New(rdb, pes)
	if _, err := ps.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	p, err := ps.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Release(context.Background()) }()
	st = c.inspect(t, pes)
	if st.Kind != kindPermits || st.Permits == nil || *st.Permits != 2 || len(st.Leases) != 1 {
		t.Fatalf("permitsemaphore: %+v", st)
	}
	if l := st.Leases[0]; l.ID != p.ID() || l.TTLms <= 0 || l.TTLms > 60000 {
		t.Errorf("permit %+v, want %s with a lease under a minute", l, p.ID())
	}

	latch := testName(t, "latch")
	l := countdownlatch.New(rdb, latch)
	if _, err := l.TrySetCount(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, latch, "-kind", "countdownlatch"); st.Kind != kindLatch || st.Count == nil || *st.Count != 3 || st.Permits != nil {
		t.Errorf("latch: %+v", st)
	}

	if st := c.inspect(t, testName(t, "nothing")); st.Kind != kindNone || len(st.Holders) != 0 || st.Queue == nil {
		t.Errorf("nothing: %+v", st)
	}
}

// testRedisson writes the layout a Java Redisson client writes (a lock
// hash of <client uuid>:<thread id> -> hold count, its fair queue) and
// checks that inspect shows it, and that unlock wakes Redisson's waiters.
func testRedisson(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "java")
	rdb.HSet(ctx, name, java+":41", 3)
	rdb.PExpire(ctx, name, 20*time.Second)
	// An RLock and an RFairLock nobody waits for write the same hash.
	st := c.inspect(t, name)
	if st.Kind != kindEitherLock || len(st.Holders) != 1 || st.Holders[0].Owner != java+":41" || st.Holders[0].Count != 3 || st.Holders[0].Client != "redisson" {
		t.Fatalf("redisson lock: %+v", st)
	}

	fair := testName(t, "javafair")
	n := namesOf(fair)
	deadline := time.Now().Add(5 * time.Minute).UnixMilli()
	rdb.HSet(ctx, fair, java+":1", 1)
	rdb.RPush(ctx, n.lock.FairQueue, java+":2", java+":3")
	rdb.ZAdd(ctx, n.lock.FairDeadlines, redis.Z{Score: float64(deadline), Member: java + ":2"}, redis.Z{Score: float64(deadline + 300000), Member: java + ":3"})
	st = c.inspect(t, fair)
	if st.Kind != kindFairLock || len(st.Queue) != 2 || st.Queue[0].Owner != java+":2" || st.Queue[1].DeadlineMs != deadline+300000 || st.Queue[0].Client != "redisson" {
		t.Fatalf("redisson fair lock: %+v", st)
	}
	defer rdb.Del(context.Background(), fair, n.lock.FairQueue, n.lock.FairDeadlines)

	// unlock publishes Redisson's "0" on the lock's channel.
	sub := rdb.Subscribe(ctx, namesOf(name).lock.Channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := c.run(t, "unlock", "-yes", name); code != 0 {
		t.Fatalf("unlock: exit %d: %s", code, errOut)
	}
	select {
	case msg := <-sub.Channel():
		if msg.Payload != "0" {
			t.Errorf("unlock published %q, want 0", msg.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("unlock published nothing on Redisson's channel")
	}
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Error("the lock is still there")
	}
}

func testLs(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "ls")
	m := mutex.New(rdb, prefix+":m")
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(context.Background()) }()
	ps := permitsemaphore.New(rdb, prefix+":p")
	if _, err := ps.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	p, err := ps.Acquire(ctx, permitsemaphore.Forever)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Release(context.Background()) }()
	rdb.Set(ctx, prefix+":text", "not a number", time.Minute)

	sts := c.states(t, "ls", "-json", prefix+":*")
	got := map[string]string{}
	for _, st := range sts {
		got[st.Name] = st.Kind
	}
	want := map[string]string{prefix + ":m": kindMutex, prefix + ":p": kindPermits}
	if len(got) != len(want) || got[prefix+":m"] != kindMutex || got[prefix+":p"] != kindPermits {
		t.Errorf("ls: %v, want %v", got, want)
	}
	out, _, code := c.run(t, "ls", prefix+":*")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, prefix+":m") {
		t.Errorf("ls table (exit %d):\n%s", code, out)
	}
	t.Logf("ls:\n%s", out)
}

// testWatch checks that watch prints a release as it happens: the backstop
// is a minute, so only the unlock message can make it look again.
func testWatch(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "watch")
	m := mutex.New(rdb, name)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	next, stop := c.watch(t, "watch", "-every", "1m", name)
	next("held by")
	// The subscription is confirmed before the first look's end; give the
	// watch a moment to finish it, then release.
	time.Sleep(200 * time.Millisecond)
	if err := m.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Log(next("released by"))
	stop()
}

// testWatchJSON checks that watch -json prints one WatchEvent per line: the
// first look, then the release.
func testWatchJSON(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "watchjson")
	m := mutex.New(rdb, name)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	next, stop := c.watch(t, "watch", "-json", "-every", "1m", name)
	decode := func(line string) WatchEvent {
		t.Helper()
		var ev WatchEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("watch -json printed %q: %v", line, err)
		}
		if ev.State == nil || ev.State.Name != name || ev.Time.IsZero() {
			t.Fatalf("watch -json event without its name, state or time: %s", line)
		}
		return ev
	}
	if ev := decode(next("")); ev.Event != "now" || len(ev.State.Holders) != 1 || ev.State.Holders[0].Client != "latchkey" {
		t.Errorf("first event %+v, want now, held by latchkey", ev)
	}
	time.Sleep(200 * time.Millisecond) // as in testWatch
	if err := m.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := decode(next("")); ev.Event != "released" || len(ev.State.Holders) != 0 {
		t.Errorf("event after Unlock %+v, want released, nothing held", ev)
	}
	stop()
}

// watch starts the binary with args, which run a watch, and returns a
// function that returns its next output line containing want, and one that
// stops the watch with SIGINT and checks that it exits cleanly.
func (c cli) watch(t *testing.T, args ...string) (next func(want string) string, stop func()) {
	t.Helper()
	w := c.startWatch(t, args...)
	return func(want string) string { t.Helper(); return w.waitFor(t, want) },
		func() { t.Helper(); w.stop(t) }
}

func testUsage(t *testing.T, c cli) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"inspect"},
		{"inspect", "-kind", "spinlock", "x"},
		{"ls", "a", "b"},
		{"watch"},
		{"inspect", "-nosuchflag", "x"},
	} {
		if _, errOut, code := c.run(t, args...); code != 2 {
			t.Errorf("latchkey %v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	bad := cli{bin: c.bin, conn: []string{"-redis", "127.0.0.1:1"}}
	_, errOut, code := bad.run(t, "inspect", "some-lock")
	if code != 1 || !strings.Contains(errOut, "127.0.0.1:1") || !strings.Contains(errOut, "some-lock") {
		t.Errorf("unreachable server: exit %d, %q: want 1 and an error naming the server and key", code, errOut)
	}
}

func testCluster(t *testing.T, bin string) {
	cl := redistest.SharedCluster(t)
	cc := cl.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(cc) })
	c := cli{bin: bin, conn: []string{"-cluster", "-redis", strings.Join(cl.Addrs(), ",")}}
	ctx := t.Context()
	prefix := testName(t, "cl")
	var names []string
	for i := range 3 { // names on different masters, most likely
		name := prefix + ":" + string(rune('a'+i))
		m := mutex.New(cc, name)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = m.Unlock(context.Background()) }()
		names = append(names, name)
	}
	w := mutex.New(cc, names[0])
	ww := wait(w.Lock, w.Unlock)
	defer ww.stop()
	queued(t, cc, namesOf(names[0]).lock.Queue, 1)
	st := c.inspect(t, names[0])
	if st.Kind != kindMutex || len(st.Holders) != 1 || len(st.Queue) != 1 {
		t.Fatalf("cluster inspect: %+v", st)
	}
	sts := c.states(t, "ls", "-json", prefix+":*")
	if len(sts) != 3 {
		t.Errorf("cluster ls: %d synchronizers, want 3: %+v", len(sts), sts)
	}
	if _, errOut, code := c.run(t, "unlock", "-yes", names[0]); code != 0 {
		t.Fatalf("cluster unlock: exit %d: %s", code, errOut)
	}
	select {
	case <-ww.got:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the lock after a cluster unlock")
	}
	testClusterGuard(t, bin, cl)
	t.Run("evict", func(t *testing.T) { testEvictFair(t, c, cc) })
	t.Run("listeners", func(t *testing.T) { testClusterListeners(t, c, cl) })
	// A name whose keys a cluster would split is refused, saying why.
	if _, errOut, code := c.run(t, "unlock", "-yes", "a}b"+prefix); code != 2 || !strings.Contains(errOut, "non-empty hash tag") {
		t.Errorf("cluster unlock of a}b...: exit %d: %s; want 2 and how to fix the name", code, errOut)
	}
}
