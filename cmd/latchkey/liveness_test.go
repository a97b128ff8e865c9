package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// testLiveness stages live and dead waiters in a mutex's queue and in a
// fair lock's, latchkey's and Redisson's, and checks that inspect tells
// each one's liveness: a dead one's lapsed heartbeat, and a waiter whose
// channel nobody listens on.
func testLiveness(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "live")
	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(context.Background()) }()
	h := mutex.New(rdb, name)
	live := wait(h.Lock, h.Unlock)
	defer live.stop()
	l := namesOf(name).lock
	queued(t, rdb, l.Queue, 1)
	// A waiter that died 12s ago, behind the live one, and one whose
	// entry has not lapsed yet but whose Hub listens no more.
	lapsed := "deadhub/" + java + ":1/a"
	silent := "silenthub/" + java + ":2/b"
	rdb.RPush(ctx, l.Queue, lapsed, silent)
	staged := time.Now()
	rdb.ZAdd(ctx, l.Deadlines,
		redis.Z{Score: float64(staged.Add(-12 * time.Second).UnixMilli()), Member: lapsed},
		redis.Z{Score: float64(staged.Add(time.Minute).UnixMilli()), Member: silent})
	defer rdb.LRem(context.Background(), l.Queue, 0, lapsed)
	defer rdb.LRem(context.Background(), l.Queue, 0, silent)
	defer rdb.ZRem(context.Background(), l.Deadlines, lapsed, silent)

	st := c.inspect(t, name)
	if len(st.Queue) != 3 {
		t.Fatalf("queue %+v, want 3 entries", st.Queue)
	}
	if w := st.Queue[0]; !w.Alive || w.LapsedMs != 0 || w.Listening == nil || !*w.Listening {
		t.Errorf("the live waiter: %+v, want alive and listening", w)
	}
	// Lapsed 12s ago when staged, and since then as long as the test saw
	// pass: no fixed bound holds when a run of the binary takes seconds.
	lo, hi := window(12*time.Second, staged)
	if w := st.Queue[1]; w.Alive || w.LapsedMs < lo.Milliseconds() || w.LapsedMs > hi.Milliseconds() || w.Listening == nil || *w.Listening {
		t.Errorf("the waiter dead 12s: %+v, want dead, lapsed within [%v, %v]", w, lo, hi)
	}
	if w := st.Queue[2]; w.Alive || w.LapsedMs != 0 || w.InMs <= 0 || w.Listening == nil || *w.Listening {
		t.Errorf("the silent waiter: %+v, want dead, not listening, its entry not lapsed", w)
	}
	if !strings.Contains(st.Note, "2 of 3 waiters dead") {
		t.Errorf("note %q, want it to count the dead", st.Note)
	}
	table, _, _ := c.run(t, "inspect", name)
	for _, want := range []string{"LIVENESS", "alive, heartbeat lapses in", "dead, not listening"} {
		if !strings.Contains(table, want) {
			t.Errorf("inspect's table lacks %q:\n%s", want, table)
		}
	}
	lo, hi = window(12*time.Second, staged)
	if m := regexp.MustCompile(`dead, heartbeat lapsed (\d+)s ago`).FindStringSubmatch(table); m == nil || !inSeconds(atoi(m[1]), lo, hi) {
		t.Errorf("inspect's table lacks the waiter dead, heartbeat lapsed within [%v, %v]:\n%s", lo, hi, table)
	}

	// Redisson's fair-lock waiters: alive while their own channel has a
	// subscriber, whatever their deadline.
	fair := testName(t, "livefair")
	fl := namesOf(fair).lock
	defer rdb.Del(context.Background(), fair, fl.FairQueue, fl.FairDeadlines)
	deadline := float64(time.Now().Add(5 * time.Minute).UnixMilli())
	rdb.HSet(ctx, fair, java+":1", 1)
	rdb.RPush(ctx, fl.FairQueue, java+":2", java+":3")
	rdb.ZAdd(ctx, fl.FairDeadlines, redis.Z{Score: deadline, Member: java + ":2"}, redis.Z{Score: deadline + 300000, Member: java + ":3"})
	javaListens(t, rdb, fl.Channel+":"+java+":3")
	st = c.inspect(t, fair)
	if st.Kind != kindFairLock || len(st.Queue) != 2 {
		t.Fatalf("fair lock: %+v", st)
	}
	if w := st.Queue[0]; w.Alive || w.Listening == nil || *w.Listening || w.Client != "redisson" {
		t.Errorf("the Java waiter that died: %+v, want dead, not listening", w)
	}
	if w := st.Queue[1]; !w.Alive || w.Listening == nil || !*w.Listening {
		t.Errorf("the Java waiter listening: %+v, want alive", w)
	}
}
