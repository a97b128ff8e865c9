package fairlock_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// deadlines returns the Redisson deadlines of name's waiters.
func deadlines(t *testing.T, c *redis.Client, name string) map[string]int64 {
	t.Helper()
	m, err := readDeadlines(c, name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readDeadlines(c *redis.Client, name string) (map[string]int64, error) {
	zs, err := c.ZRangeWithScores(context.Background(), timeoutKey(name), 0, -1).Result()
	m := make(map[string]int64, len(zs))
	for _, z := range zs {
		m[z.Member.(string)] = int64(z.Score)
	}
	return m, err
}

// TestRedissonWaiterKeepsPlace: behind a Redisson holder that holds the
// lock six times latchkey's liveness timeout, a Redisson waiter queued
// between two latchkey waiters keeps its place and its deadline (each
// deadline is the one before it plus the wait timeout, and nobody moves
// any), and when the first waiter takes the lock every deadline behind it
// comes exactly one wait timeout closer. All three then get the lock in
// order.
func TestRedissonWaiterKeepsPlace(t *testing.T) {
	newClient := realServer(t)
	const liveness, hold = 500 * time.Millisecond, 3 * time.Second
	c, name := newClient(), lockName()
	java := newJavaLock(newClient(), name)
	wait := java.wait.Milliseconds()
	parties := []*party{
		latchkeyParty(fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(liveness))),
		javaParty(java, 2),
		latchkeyParty(fairlock.New(newClient(), name, fairlock.WithLivenessTimeout(liveness))),
	}
	var afterFirst map[string]int64 // read once the first waiter has the lock
	first := parties[0].lock
	parties[0].lock = func(ctx context.Context) error {
		if err := first(ctx); err != nil {
			return err
		}
		var err error
		afterFirst, err = readDeadlines(c, name)
		return err
	}
	var owners []string
	var before map[string]int64
	check := func(got []string) {
		owners, before = got, deadlines(t, c, name)
		for i := 1; i < len(owners); i++ {
			if d := before[owners[i]] - before[owners[i-1]]; d != wait {
				t.Fatalf("waiter %d's deadline is %dms after the one before, want the wait timeout, %dms", i, d, wait)
			}
		}
		for end := time.Now().Add(hold); time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
			if q := c.LRange(context.Background(), queueKey(name), 0, -1).Val(); !slices.Equal(q, owners) {
				t.Fatalf("during the Redisson hold the queue became %q, was %q", q, owners)
			}
			if now := deadlines(t, c, name); !maps.Equal(now, before) {
				t.Fatalf("during the Redisson hold the deadlines became %v, were %v", now, before)
			}
		}
	}
	holder := javaParty(newJavaLock(c, name), 1)
	turns, released := mixedRound(t, c, name, holder, parties, time.Millisecond, nil, check)
	if got := indexes(turns); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("acquired in order %v, want [0 1 2]", got)
	}
	for k, d := range handovers(turns, released) {
		if d > 100*time.Millisecond {
			t.Errorf("waiter %d got the lock %v after the release before it", turns[k].i, d)
		}
	}
	if parties[1].joins != 1 {
		t.Errorf("the Redisson waiter joined the queue %d times, want once", parties[1].joins)
	}
	for _, o := range owners[1:] {
		if got, want := afterFirst[o], before[o]-wait; got != want {
			t.Errorf("after the first acquisition %s's deadline is %d, want %d (one wait timeout closer)", o, got, want)
		}
	}
	if n, z := queueState(t, c, name); n != 0 || z != 0 {
		t.Fatalf("queue %d, deadlines %d left", n, z)
	}
}

// TestMixedQueueSkipsKilledWaiter: in a queue of L J L J L J L, a latchkey
// waiter whose process is SIGKILLed while it waits (TestKilledWaiterChild)
// is skipped within its liveness timeout, wherever it is, and the others,
// Redisson waiters among them, get the lock in their order without any
// Redisson waiter being dropped.
func TestMixedQueueSkipsKilledWaiter(t *testing.T) {
	if redistest.IsChild() {
		t.Skip("not in a child")
	}
	srv := redistest.SharedServer(t)
	newClient := makerFor(t, srv.Addr())
	const waiters, liveness = 7, time.Second
	c := newClient()
	clients := make([]*redis.Client, waiters)
	for i := range clients {
		clients[i] = newClient()
	}
	for _, dead := range []int{0, 4, 6} {
		t.Run(fmt.Sprintf("dead=%d", dead), func(t *testing.T) {
			name := lockName()
			opt := fairlock.WithLivenessTimeout(liveness)
			parties := mixedParties(clients, name, opt)
			parties[dead] = nil
			var want []int
			for i := range waiters {
				if i != dead {
					want = append(want, i)
				}
			}
			var child *redistest.Child
			start := func(int) {
				child = redistest.StartChild(t, "TestKilledWaiterChild",
					"FAIRLOCK_ADDR="+srv.Addr(), "FAIRLOCK_NAME="+name)
				child.WaitLine(t, "WAITING", 30*time.Second)
			}
			var killed time.Time
			kill := func([]string) {
				child.Kill()
				killed = time.Now()
			}
			holder := latchkeyParty(fairlock.New(c, name, opt))
			turns, _ := mixedRound(t, c, name, holder, parties, time.Millisecond, start, kill)
			if got := indexes(turns); !slices.Equal(got, want) {
				t.Fatalf("acquired in order %v, want %v", got, want)
			}
			for i, p := range parties {
				if p != nil && p.kind == "J" && p.joins != 1 {
					t.Errorf("Redisson waiter %d joined the queue %d times, want once", i, p.joins)
				}
			}
			// The first waiter behind the dead slot gets the lock within the
			// liveness timeout of the kill (plus scheduling slack); behind a
			// dead last waiter, that is a newcomer.
			var behind time.Time
			for _, tr := range turns {
				if tr.i > dead {
					behind = tr.acquired
					break
				}
			}
			if behind.IsZero() {
				late := fairlock.New(c, name, opt)
				if err := late.Lock(testCtx(t)); err != nil {
					t.Fatal(err)
				}
				behind = time.Now()
				if err := late.Unlock(testCtx(t)); err != nil {
					t.Fatal(err)
				}
			}
			stall := behind.Sub(killed)
			t.Logf("dead waiter %d skipped %v after it was killed (liveness timeout %v)", dead, stall.Round(time.Millisecond), liveness)
			if stall > liveness+2*time.Second {
				t.Errorf("the dead slot stalled the queue for %v", stall)
			}
			if n, z := queueState(t, c, name); n != 0 || z != 0 {
				t.Fatalf("queue %d, deadlines %d left", n, z)
			}
		})
	}
}

// TestRedissonNextLearnsNewLease: a Redisson waiter sleeps on the TTL it
// last saw. When the latchkey waiter ahead of it takes the lock and dies
// holding it, the Redisson waiter gets the lock when that lease runs out,
// not when the earlier holder's longer TTL would have.
func TestRedissonNextLearnsNewLease(t *testing.T) {
	newClient := realServer(t)
	ctx, c, name := testCtx(t), newClient(), lockName()
	const lease = time.Second // above the heartbeat below: only the Redisson rule wakes the next
	holder := fairlock.New(c, name, fairlock.WithLease(20*time.Second))
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	first := fairlock.New(newClient(), name, fairlock.WithLease(lease), fairlock.WithLivenessTimeout(300*time.Millisecond))
	fdone := goLock(func() error { return first.Lock(ctx) }) // never unlocked
	waitQueued(t, c, name, 1)
	java := newJavaLock(newClient(), name)
	jdone := goLock(func() error { _, err := java.Lock(ctx, 1); return err })
	waitQueued(t, c, name, 2)
	waitListening(t, c, name, []string{java.owner(1)})
	released := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if r := await(t, fdone, 5*time.Second); r.err != nil {
		t.Fatal(r.err)
	}
	r := await(t, jdone, 25*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	d := r.at.Sub(released)
	t.Logf("the Redisson waiter got the lock %v after the release (the latchkey holder's lease %v)", d.Round(time.Millisecond), lease)
	if d > lease+2*time.Second {
		t.Fatalf("the Redisson waiter got the lock %v after the release, want about the lease, %v", d, lease)
	}
}
