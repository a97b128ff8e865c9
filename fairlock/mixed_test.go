package fairlock_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/redis/go-redis/v9"
)

// A party waits for or holds a lock shared by latchkey and Redisson
// clients: a latchkey Mutex ("L") or a thread of a Redisson client ("J").
type party struct {
	kind   string
	lock   func(ctx context.Context) error
	unlock func(ctx context.Context) error
	joins  int // a Redisson thread's queue joins in its last lock
}

func latchkeyParty(m *fairlock.Mutex) *party {
	return &party{kind: "L", lock: m.Lock, unlock: m.Unlock}
}

func javaParty(j *javaLock, thread int) *party {
	p := &party{kind: "J", unlock: func(ctx context.Context) error { return j.Unlock(ctx, thread) }}
	p.lock = func(ctx context.Context) (err error) {
		p.joins, err = j.Lock(ctx, thread)
		return err
	}
	return p
}

// turn is one party's time with the lock.
type turn struct {
	i                  int
	acquired, released time.Time // released: when its Unlock started
}

// mixedRound has holder take the lock, queues parties[0], parties[1], ...
// one after another, each once the one before is in the queue, waits until
// every queued waiter listens on its channel, runs beforeRelease (if set)
// with the queued owners, and has the holder release. A nil party is a slot
// that start(i) fills from outside. Each party, once it has the lock, holds
// it for hold and releases it. mixedRound returns the turns in the order
// they came, and the holder's release time.
func mixedRound(t *testing.T, c *redis.Client, name string, holder *party, parties []*party, hold time.Duration,
	start func(i int), beforeRelease func(owners []string)) ([]turn, time.Time) {
	t.Helper()
	ctx := testCtx(t)
	if err := holder.lock(ctx); err != nil {
		t.Fatal(err)
	}
	turns := make(chan turn, len(parties))
	errs := make(chan error, len(parties))
	running := 0
	for i, p := range parties {
		if p == nil {
			start(i)
		} else {
			running++
			go func() {
				if err := p.lock(ctx); err != nil {
					errs <- fmt.Errorf("waiter %d (%s): %w", i, p.kind, err)
					return
				}
				tr := turn{i: i, acquired: time.Now()}
				time.Sleep(hold)
				tr.released = time.Now()
				if err := p.unlock(ctx); err != nil {
					errs <- fmt.Errorf("waiter %d (%s): unlock: %w", i, p.kind, err)
					return
				}
				turns <- tr
			}()
		}
		waitQueued(t, c, name, int64(i+1))
	}
	owners := c.LRange(ctx, queueKey(name), 0, -1).Val()
	waitListening(t, c, name, owners)
	if beforeRelease != nil {
		beforeRelease(owners)
	}
	released := time.Now()
	if err := holder.unlock(ctx); err != nil {
		t.Fatal(err)
	}
	var got []turn
	for range running {
		select {
		case tr := <-turns:
			got = append(got, tr)
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("only %d of %d waiters got the lock", len(got), running)
		}
	}
	sort.Slice(got, func(a, b int) bool { return got[a].acquired.Before(got[b].acquired) })
	return got, released
}

// waitListening waits until each of owners listens where it is told (see
// listening), and a little longer, so that each has made the attempt that
// follows its subscription and sleeps.
func waitListening(t *testing.T, c *redis.Client, name string, owners []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, o := range owners {
		for ok, _ := listening(c, name, o); !ok; ok, _ = listening(c, name, o) {
			if time.Now().After(deadline) {
				t.Fatalf("waiter %s never subscribed", o)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	time.Sleep(20 * time.Millisecond)
}

// handovers returns, for each turn, the time from the release before it
// (the holder's, for the first) to its acquisition.
func handovers(turns []turn, released time.Time) []time.Duration {
	var ds []time.Duration
	for _, tr := range turns {
		ds = append(ds, tr.acquired.Sub(released))
		released = tr.released
	}
	return ds
}

func indexes(turns []turn) []int {
	var is []int
	for _, tr := range turns {
		is = append(is, tr.i)
	}
	return is
}

// mixedParties returns n waiters for name, latchkey and Redisson by turns
// starting with latchkey (L J L J ...), each on its own client from
// clients; the Redisson ones are threads of one Redisson client.
func mixedParties(clients []*redis.Client, name string, opts ...fairlock.Option) []*party {
	java := newJavaLock(clients[0], name)
	ps := make([]*party, len(clients))
	for i, c := range clients {
		if i%2 == 0 {
			ps[i] = latchkeyParty(fairlock.New(c, name, opts...))
		} else {
			j := *java
			j.c = c
			ps[i] = javaParty(&j, i)
		}
	}
	return ps
}

// TestMixedQueueOrder: 7 waiters, latchkey and Redisson by turns (L J L J
// L J L), queued behind a holder of either kind, get the lock in the order
// they queued, each woken by the release before it (within 2s: a waiter
// that nothing wakes sleeps 5s, or a Redisson one its TTL; how soon is the
// benchmark's to measure, not a loaded machine's), 20 times over, and no
// Redisson waiter is ever dropped from the queue.
func TestMixedQueueOrder(t *testing.T) {
	newClient := realServer(t)
	const waiters, rounds, bound = 7, 20, 2 * time.Second
	c := newClient()
	clients := make([]*redis.Client, waiters)
	for i := range clients {
		clients[i] = newClient()
	}
	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	for _, kind := range []string{"L", "J"} {
		t.Run("holder="+kind, func(t *testing.T) {
			var all []time.Duration
			for round := range rounds {
				name := lockName()
				holder := latchkeyParty(fairlock.New(c, name))
				if kind == "J" {
					holder = javaParty(newJavaLock(c, name), 1)
				}
				parties := mixedParties(clients, name)
				turns, released := mixedRound(t, c, name, holder, parties, time.Millisecond, nil, nil)
				if got := indexes(turns); !slices.Equal(got, want) {
					t.Fatalf("round %d: acquired in order %v, want %v", round, got, want)
				}
				for k, d := range handovers(turns, released) {
					if d > bound {
						t.Errorf("round %d: waiter %d (%s) got the lock %v after the release before it, want within %v",
							round, turns[k].i, parties[turns[k].i].kind, d, bound)
					}
					all = append(all, d)
				}
				for i, p := range parties {
					if p.kind == "J" && p.joins != 1 {
						t.Errorf("round %d: Redisson waiter %d joined the queue %d times, want once", round, i, p.joins)
					}
				}
				if n, z := queueState(t, c, name); n != 0 || z != 0 {
					t.Fatalf("round %d: queue %d, deadlines %d left", round, n, z)
				}
			}
			slices.Sort(all)
			t.Logf("%d hand-overs: median %v, p90 %v, max %v", len(all),
				all[len(all)/2].Round(time.Microsecond), all[len(all)*9/10].Round(time.Microsecond), all[len(all)-1].Round(time.Microsecond))
		})
	}
}
