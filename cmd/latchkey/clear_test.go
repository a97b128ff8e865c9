package main

import (
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// Every process died and the lock expired: its queues are left, overdue
// (they have no TTL). unlock says not locked and points at clear, which
// deletes them; a held lock is refused.
func testClear(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "dead")
	l := namesOf(name).lock
	overdue := float64(time.Now().Add(-time.Minute).UnixMilli())
	for i, o := range []string{"0f1e2d3c-4b5a-4968-8776-655443322110:1", "0f1e2d3c-4b5a-4968-8776-655443322110:2"} {
		e := "deadhub/" + o + "/" + string(rune('a'+i))
		rdb.RPush(ctx, l.Queue, e)
		rdb.ZAdd(ctx, l.Deadlines, redis.Z{Score: overdue, Member: e})
	}
	if st := c.inspect(t, name); st.Kind != kindMutex || len(st.Queue) != 2 {
		t.Fatalf("inspect of the leftovers: %+v", st)
	}
	out, _, code := c.run(t, "unlock", "-yes", name)
	if code != exitNotLocked || !strings.Contains(out, "latchkey clear") {
		t.Errorf("unlock of the leftovers: exit %d, %q; want %d and a hint", code, out, exitNotLocked)
	}
	if _, _, code := c.run(t, "clear", name); code != exitNotConfirmed {
		t.Errorf("clear without -yes: exit %d, want %d", code, exitNotConfirmed)
	}
	if out, errOut, code := c.run(t, "clear", "-yes", name); code != 0 || !strings.Contains(out, "cleared mutex") {
		t.Fatalf("clear: exit %d: %s%s", code, out, errOut)
	}
	if n := rdb.Exists(ctx, l.Queue, l.Deadlines).Val(); n != 0 {
		t.Errorf("%d queue keys left after clear", n)
	}
	if _, _, code := c.run(t, "inspect", name); code != exitNothing {
		t.Errorf("inspect after clear: exit %d, want %d", code, exitNothing)
	}

	// A fair lock's, in Redisson's layout: a Java waiter's leftovers.
	fair := testName(t, "deadfair")
	fl := namesOf(fair).lock
	rdb.RPush(ctx, fl.FairQueue, java+":3")
	rdb.ZAdd(ctx, fl.FairDeadlines, redis.Z{Score: overdue, Member: java + ":3"})
	if out, errOut, code := c.run(t, "clear", "-yes", fair); code != 0 || !strings.Contains(out, "cleared fairlock") {
		t.Fatalf("clear of a fair lock: exit %d: %s%s", code, out, errOut)
	}
	if n := rdb.Exists(ctx, fl.FairQueue, fl.FairDeadlines).Val(); n != 0 {
		t.Errorf("%d of Redisson's queue keys left after clear", n)
	}

	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(ctx) }()
	if _, errOut, code := c.run(t, "clear", "-yes", name); code != exitRefused || !strings.Contains(errOut, "held") {
		t.Errorf("clear of a held lock: exit %d, %q; want %d (refused, not an error of Redis)", code, errOut, exitRefused)
	}
	if ok, _ := m.IsLocked(ctx); !ok {
		t.Error("clear deleted a held lock")
	}
}
