package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// testKinds checks the kinds told by what lies beside a name: an
// uncontended fair lock, a Redisson lock hash alone (ambiguous, said so)
// and with a waiter listening, semaphores told by their queues, and an
// integer that belongs to nothing, which ls leaves out.
func testKinds(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "kinds")

	fair := prefix + ":fair"
	f := fairlock.New(rdb, fair)
	if err := f.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Unlock(context.Background()) }()
	if st := c.inspect(t, fair); st.Kind != kindFairLock {
		t.Errorf("uncontended latchkey fair lock: kind %s, want %s", st.Kind, kindFairLock)
	}

	java1 := prefix + ":java"
	rdb.HSet(ctx, java1, java+":1", 1)
	rdb.PExpire(ctx, java1, time.Minute)
	st := c.inspect(t, java1)
	if st.Kind != kindEitherLock || !strings.Contains(st.Note, "cannot tell apart") {
		t.Errorf("a Redisson lock hash alone: kind %s, note %q; want %s and why", st.Kind, st.Note, kindEitherLock)
	}
	javaListens(t, rdb, namesOf(java1).lock.Channel) // an RLock waiter
	if st := c.inspect(t, java1); st.Kind != kindMutex || st.Subscribers == nil || *st.Subscribers != 1 {
		t.Errorf("a Redisson lock hash with a waiter on its channel: kind %s, subscribers %v; want mutex, 1", st.Kind, ptr(st.Subscribers))
	}

	sem := prefix + ":sem"
	s := semaphore.New(rdb, sem)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Release(context.Background(), 1) }()
	sw := wait(func(ctx context.Context) error { return s.Acquire(ctx, 1) }, func(ctx context.Context) error { return s.Release(ctx, 1) })
	defer sw.stop()
	queued(t, rdb, namesOf(sem).sem.Queue, 1)
	if st := c.inspect(t, sem); st.Kind != kindSemaphore || len(st.Queue) != 1 || !st.Queue[0].Alive {
		t.Errorf("a semaphore with a latchkey waiter queued: kind %s, queue %+v; want semaphore, 1 alive", st.Kind, st.Queue)
	}

	// A permit semaphore none of whose permits is held is a plain integer;
	// a waiter's entry (<hub id>/<permit ids in hex>) tells it.
	pes := prefix + ":pes"
	if _, err := permitsemaphore.New(rdb, pes).TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, pes); st.Kind != kindCounter {
		t.Errorf("a permit semaphore, no permit held: kind %s, want %s", st.Kind, kindCounter)
	}
	pq := namesOf(pes).sem
	entry := "somehub/" + strings.Repeat("ab", 16)
	rdb.RPush(ctx, pq.Queue, entry)
	rdb.ZAdd(ctx, pq.Deadlines, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: entry})
	defer rdb.Del(context.Background(), pq.Queue, pq.Deadlines)
	if st := c.inspect(t, pes); st.Kind != kindPermits || len(st.Queue) != 1 || st.Queue[0].Alive {
		t.Errorf("a permit semaphore with a (dead) waiter queued: kind %s, queue %+v; want permitsemaphore, 1 dead", st.Kind, st.Queue)
	}

	// An integer of some other program's: no synchronizer.
	counter := prefix + ":hits"
	rdb.Set(ctx, counter, 42, time.Minute)
	st = c.inspect(t, counter)
	if st.Kind != kindCounter || !strings.Contains(st.Note, "nothing beside it") {
		t.Errorf("an unrelated integer: kind %s, note %q", st.Kind, st.Note)
	}
	if _, errOut, code := c.run(t, "countdown", "-yes", counter); code != exitRefused {
		t.Errorf("countdown of an unrelated integer without -kind: exit %d (%s), want %d", code, errOut, exitRefused)
	}
	listed := map[string]string{}
	for _, st := range c.states(t, "ls", "-json", prefix+":*") {
		listed[st.Name] = st.Kind
	}
	want := map[string]string{fair: kindFairLock, java1: kindMutex, sem: kindSemaphore, pes: kindPermits}
	if len(listed) != len(want) {
		t.Errorf("ls: %v, want %v", listed, want)
	}
	for n, k := range want {
		if listed[n] != k {
			t.Errorf("ls: %s is %q, want %q", n, listed[n], k)
		}
	}
	all := c.states(t, "ls", "-json", "-all", prefix+":*")
	if len(all) != len(want)+1 {
		t.Errorf("ls -all: %d synchronizers, want %d with the integer", len(all), len(want)+1)
	}
}

// testLeftovers stages what every process of a mutex left when it died:
// the lock expired, its queue of dead waiters is left (no TTL). ls lists
// the name and says to clear it; unlock points to clear.
func testLeftovers(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	prefix := testName(t, "left")
	name := prefix + ":m"
	l := namesOf(name).lock
	defer rdb.Del(context.Background(), l.Queue, l.Deadlines)
	lapsed := float64(time.Now().Add(-time.Minute).UnixMilli())
	for i, o := range []string{java + ":1", java + ":2", java + ":3", java + ":4"} {
		e := "deadhub/" + o + "/" + string(rune('a'+i))
		rdb.RPush(ctx, l.Queue, e)
		rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: lapsed, Member: e})
	}
	sts := c.states(t, "ls", "-json", prefix+":*")
	if len(sts) != 1 || sts[0].Name != name || sts[0].Kind != kindMutex || len(sts[0].Queue) != 4 {
		t.Fatalf("ls of the leftovers: %+v", sts)
	}
	if note := sts[0].Note; !strings.Contains(note, "free; 4 dead waiters queued: run latchkey clear "+name) {
		t.Errorf("ls's note %q, want it to say to clear", note)
	}
	table, _, _ := c.run(t, "ls", prefix+":*")
	if !strings.Contains(table, "4 (4 dead)") || !strings.Contains(table, "run latchkey clear") {
		t.Errorf("ls's table:\n%s", table)
	}
	out, _, code := c.run(t, "unlock", "-yes", name)
	if code != exitNotLocked || !strings.Contains(out, "4 dead waiters queued, left behind: run latchkey clear "+name) {
		t.Errorf("unlock of the leftovers: exit %d, %q", code, out)
	}

	// A fair lock's, Redisson's waiters': listed too.
	fair := prefix + ":f"
	fl := namesOf(fair).lock
	defer rdb.Del(context.Background(), fl.FairQueue, fl.FairDeadlines)
	rdb.RPush(ctx, fl.FairQueue, java+":9")
	rdb.ZAdd(ctx, fl.FairDeadlines, redis.Z{Score: lapsed, Member: java + ":9"})
	sts = c.states(t, "ls", "-json", prefix+":*")
	if len(sts) != 2 || sts[0].Name != fair || sts[0].Kind != kindFairLock || !strings.Contains(sts[0].Note, "run latchkey clear") {
		t.Errorf("ls with a fair lock's leftovers too: %+v", sts)
	}
}

// TestLsDefaultPattern lists a whole server with ls's default pattern,
// which reads the keyspace once: a held lock, and a lock that only its
// dead waiters' queue is left of, are both listed; an auxiliary key alone
// (a fencing counter's neighbour, a request record) is not a name.
func TestLsDefaultPattern(t *testing.T) {
	srv := redistest.StartServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	ctx := t.Context()
	held := mutex.New(rdb, "held")
	if err := held.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock(context.Background())
	l := namesOf("left").lock
	lapsed := float64(time.Now().Add(-time.Minute).UnixMilli())
	e := "deadhub/" + java + ":1/a"
	rdb.RPush(ctx, l.Queue, e)
	rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: lapsed, Member: e})
	rdb.Set(ctx, keys.Once("gone", "req"), "n1", time.Minute)
	rdb.ConfigResetStat(ctx)
	var names []string
	for _, st := range c.states(t, "ls", "-json") {
		names = append(names, st.Name+" "+st.Kind)
	}
	if want := []string{"held mutex", "left mutex"}; !slices.Equal(names, want) {
		t.Errorf("ls: %q, want %q", names, want)
	}
	stats := rdb.Info(ctx, "commandstats").Val()
	if !strings.Contains(stats, "cmdstat_scan:calls=1,") {
		t.Errorf("ls of every name read the keyspace more than once: %s", stats)
	}
}
