package mutex_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// handOn sets up a lock that owner "a:1" holds and the waiters with the
// given entries queue for, in order, each owner id being its entry's key;
// prepare runs next; then a:1 releases. It returns the release's answer.
func handOn(t *testing.T, c redis.UniversalClient, l keys.Lock, entries []string, prepare func()) int64 {
	t.Helper()
	ctx := context.Background()
	send := func(req scripts.Request) *redis.Cmd {
		t.Helper()
		cmd := rt.Of(c).Sender(nil, 0).Send(ctx, req).Cmd
		if cmd.Err() != nil {
			t.Fatal(cmd.Err())
		}
		return cmd
	}
	acquire := func(owner, entry string) scripts.MutexAcquire {
		return scripts.MutexAcquire{Lock: l, Owner: owner, Entry: entry, Lease: 10 * time.Second, Reentry: scripts.Fresh}
	}
	if vs, _ := scripts.Ints(send(acquire("a:1", "/a:1").Request())); len(vs) == 0 || vs[0] != 1 {
		t.Fatalf("a:1 did not take the free lock: %v", vs)
	}
	for _, e := range entries {
		if vs, _ := scripts.Ints(send(acquire(e[len(e)-3:], e).Request())); len(vs) < 3 || vs[0] != 0 {
			t.Fatalf("%s did not queue: %v", e, vs)
		}
	}
	prepare()
	n, err := scripts.Int(send(scripts.MutexRelease{Lock: l, Owner: "a:1", Lease: 10 * time.Second, Yield: scripts.YieldLock}.Request()))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A release hands the lock on the fast way unless it cannot: a waiter
// whose Hub is gone (nobody hears its letter) is dropped, and the next one
// granted; the fencing counter's start and every 256th token take
// fence.lua's way. Each grant leaves the grantee holding with a token of
// its own, and the queue without it.
func TestMutex_handOnWays(t *testing.T) {
	c := client(t, server(t))
	ctx := context.Background()
	check := func(t *testing.T, l keys.Lock, n int64, holder string) {
		t.Helper()
		if n != scripts.ReleasedQueued {
			t.Errorf("release answered %d, want %d", n, scripts.ReleasedQueued)
		}
		if got := c.HGetAll(ctx, l.Name).Val(); len(got) != 1 || got[holder] != "1" {
			t.Errorf("lock hash %v, want %s holding once", got, holder)
		}
		if got := c.Get(ctx, l.Grant).Val(); got != "/"+holder {
			t.Errorf("grant %q, want /%s", got, holder)
		}
		if q := c.LRange(ctx, l.Queue, 0, -1).Val(); len(q) != 0 {
			t.Errorf("queue %v after the grant, want it empty", q)
		}
		if z := c.ZCard(ctx, l.Deadlines).Val(); z != 0 {
			t.Errorf("%d deadlines after the grant, want none", z)
		}
	}
	t.Run("gone waiter dropped", func(t *testing.T) {
		l := keys.LockOf(lockName(t))
		// gone/b:1's Hub channel has no subscriber: its letter is heard by
		// nobody, and the server counts receivers.
		n := handOn(t, c, l, []string{"gone/b:1", "/c:1"}, func() {})
		check(t, l, n, "c:1")
	})
	t.Run("counter's start", func(t *testing.T) {
		l := keys.LockOf(lockName(t))
		start := time.Now().UnixMicro()
		n := handOn(t, c, l, []string{"/b:1"}, func() { c.Del(ctx, l.Token) })
		check(t, l, n, "b:1")
		if tok, _ := strconv.ParseInt(c.Get(ctx, l.Token).Val(), 10, 64); tok < start {
			t.Errorf("token %d after the counter started again, want the server's clock, at least %d", tok, start)
		}
	})
	t.Run("256th token", func(t *testing.T) {
		l := keys.LockOf(lockName(t))
		n := handOn(t, c, l, []string{"/b:1"}, func() { c.Set(ctx, l.Token, 1e15+255, time.Minute) })
		check(t, l, n, "b:1")
		if tok := c.Get(ctx, l.Token).Val(); tok != "1000000000000256" {
			t.Errorf("token %s, want 1000000000000256", tok)
		}
		if ttl := c.PTTL(ctx, l.Token).Val(); ttl < time.Hour {
			t.Errorf("the counter's TTL %v after its 256th token, want it renewed to a day", ttl)
		}
	})
}
