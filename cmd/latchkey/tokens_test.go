package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// testTokens: inspect shows a fair lock's fencing token, and a read-write
// lock's while a latchkey writer holds it, the token its holder has; a
// held fair lock with nobody queued is told from a mutex by its counter.
func testTokens(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	fair := testName(t, "fair")
	f := fairlock.New(rdb, fair)
	if err := f.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.inspect(t, fair)
	if st.Kind != kindFairLock || st.Token == nil || *st.Token != f.Token() || f.Token() == 0 {
		t.Errorf("held fair lock: kind %s, token %v; want fairlock, %d", st.Kind, st.Token, f.Token())
	}
	table, _, _ := c.run(t, "inspect", fair)
	if !strings.Contains(table, "TOKEN") || !strings.Contains(table, strconv.FormatInt(f.Token(), 10)) {
		t.Errorf("inspect's table has no token %d:\n%s", f.Token(), table)
	}
	last := f.Token()
	if err := f.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, fair); st.Kind != kindFairLock || st.Token == nil || *st.Token != last {
		t.Errorf("free fair lock: kind %s, token %v; want fairlock, the last token %d", st.Kind, st.Token, last)
	}

	name := testName(t, "rw")
	rw := rwlock.New(rdb, name)
	if err := rw.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	st = c.inspect(t, name)
	if st.Kind != kindRWLock || st.Mode != "write" || st.Token == nil || *st.Token != rw.WriteLock().Token() {
		t.Errorf("write-held rwlock: kind %s, mode %s, token %v; want rwlock, write, %d",
			st.Kind, st.Mode, st.Token, rw.WriteLock().Token())
	}
	if err := rw.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	if st := c.inspect(t, name); st.Mode != "read" || st.Token != nil {
		t.Errorf("read-held rwlock: mode %s, token %v; want read and no token (readers have none)", st.Mode, st.Token)
	}
	if err := rw.RUnlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A Redisson writer draws no token: the counter is an earlier writer's.
	rdb.HSet(ctx, name, "mode", "write", "6a1d3c2e-58f4-4b7e-9c0d-1e2f3a4b5c6d:1:write", 1)
	defer rdb.Del(context.Background(), name)
	if st := c.inspect(t, name); st.Mode != "write" || st.Token != nil {
		t.Errorf("rwlock held by a Redisson writer: mode %s, token %v; want write and no token", st.Mode, st.Token)
	}
}

// testTokenPerHolder: a Java client's RLock taken after a latchkey
// holder's release shows no token of its own (an RLock draws none): the
// counter, the latchkey holder's token, is not shown as the Java holder's.
func testTokenPerHolder(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "tokenjava")
	m := mutex.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	goToken := m.Token()
	if st := c.inspect(t, name); len(st.Holders) != 1 || st.Holders[0].Token == nil || *st.Holders[0].Token != goToken {
		t.Fatalf("a latchkey holder: %+v, want its token %d", st.Holders, goToken)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, name, java+":3", 1) // a Java client's RLock
	rdb.PExpire(ctx, name, 30*time.Second)
	defer rdb.Del(context.Background(), name)
	st := c.inspect(t, name)
	if len(st.Holders) != 1 || st.Holders[0].Token != nil || st.Token == nil || *st.Token != goToken {
		t.Errorf("a Java holder after a latchkey one: holders %+v, counter %v; want no token of its own, the counter %d", st.Holders, st.Token, goToken)
	}
	table, _, _ := c.run(t, "inspect", name)
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, java) && strings.Contains(l, strconv.FormatInt(goToken, 10)) {
			t.Errorf("the Java holder's row shows the earlier holder's token:\n%s", table)
		}
	}
	ls, _, _ := c.run(t, "ls", name)
	if strings.Contains(ls, "token=") || !strings.Contains(ls, "counter="+strconv.FormatInt(goToken, 10)) {
		t.Errorf("ls shows a token for the Java holder:\n%s", ls)
	}
}
