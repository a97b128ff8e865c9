package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestWatchFair runs watch on fair locks, whose releases go to each
// waiter's own channel, and on the holds that end with nothing heard.
func TestWatchFair(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	t.Run("contended", func(t *testing.T) { t.Parallel(); testWatchFairContended(t, c, rdb) })
	t.Run("java and go", func(t *testing.T) { t.Parallel(); testWatchFairMixed(t, c, rdb) })
	t.Run("uncontended", func(t *testing.T) { t.Parallel(); testWatchFairMissed(t, c, rdb) })
	t.Run("expiry", func(t *testing.T) { t.Parallel(); testWatchExpiry(t, c, rdb) })
	t.Run("late start", func(t *testing.T) { t.Parallel(); testWatchLateStart(t, c, rdb) })
}

// holderOf returns the owner holding name now.
func holderOf(t *testing.T, rdb redis.UniversalClient, name string) string {
	t.Helper()
	owners, err := rdb.HKeys(t.Context(), name).Result()
	if err != nil || len(owners) != 1 {
		t.Fatalf("holders of %s: %v, %v", name, owners, err)
	}
	return owners[0]
}

// testWatchFairContended: three processes' worth of latchkey clients take
// a fair lock 30 times in all, each hold 20ms, each handed over by a
// grant on the next waiter's Hub's channel; -every is a minute, so only
// what watch hears makes it look. Every holder shows in its output.
// Before, watch heard none of the grants: 30 holds gave a few lines.
func testWatchFairContended(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wfair")
	f := fairlock.New(rdb, name) // its counter tells watch what it is from the first look
	if err := f.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	var mu sync.Mutex
	var holders []string
	var wg sync.WaitGroup
	for range 3 {
		l := fairlock.New(rdb, name)
		wg.Go(func() {
			for range 10 {
				if err := l.Lock(t.Context()); err != nil {
					return
				}
				mu.Lock()
				holders = append(holders, holderOf(t, rdb, name))
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				_ = l.Unlock(context.Background())
			}
		})
	}
	wg.Wait()
	checkHeard(t, w, holders)
}

// checkHeard waits for the watch to settle and checks that it accounts
// for every hold, once: each of holders shows in a change line as a
// holder, or as a release of a hold it did not see, or among the
// acquisitions it says it may have missed; and that it heard every
// release that handed the lock over (no "no release of X was heard").
func checkHeard(t *testing.T, w *watchRun, holders []string) {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
	lines := w.stop(t)
	out := strings.Join(lines, "\n")
	seen, unseen := 0, 0
	for _, h := range holders {
		if regexp.MustCompile(`(by|->) ` + regexp.QuoteMeta(h) + `\D`).MatchString(out) {
			seen++
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "hold not seen") {
			unseen++
		}
	}
	if seen+unseen+missedCount(lines) != len(holders) || strings.Contains(out, "was heard") {
		t.Errorf("%d holds: %d seen, %d released unseen, %d said missed:\n%s", len(holders), seen, unseen, missedCount(lines), out)
	}
}

// missedRE reads the holds a "may have missed" line counts.
var missedRE = regexp.MustCompile(`: (\d+) latchkey acquisitions \(re-entries count\) since the last look, (\d+) of them seen or heard`)

// missedCount sums the acquisitions that watch said it missed.
func missedCount(lines []string) int {
	n := 0
	for _, l := range lines {
		if m := missedRE.FindStringSubmatch(l); m != nil {
			all, _ := strconv.Atoi(m[1])
			seen, _ := strconv.Atoi(m[2])
			n += all - seen
		}
	}
	return n
}

// testWatchFairMixed hands a fair lock back and forth between a Java
// client (its holds and waits written as Redisson's scripts write them)
// and latchkey's, 10 times each way: a Java release wakes the latchkey
// waiter on its own Redisson channel, a latchkey release the Java waiter
// on its own. Every hold shows in watch's output, none as not heard.
func testWatchFairMixed(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wmixed")
	l := namesOf(name).lock
	defer rdb.Del(context.Background(), name, l.FairQueue, l.FairDeadlines, l.Heartbeats, l.FairToken, l.Grant)
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	jv := java + ":1" // the Java holder
	rdb.HSet(ctx, name, jv, 1)
	rdb.PExpire(ctx, name, 30*time.Second)
	holders := []string{jv}
	for i := range 10 {
		// A latchkey waiter queues; the Java holder releases to it.
		f := fairlock.New(rdb, name)
		got := make(chan error, 1)
		go func() { got <- f.Lock(ctx) }()
		queued(t, rdb, l.FairQueue, 1)
		head := rdb.LIndex(ctx, l.FairQueue, 0).Val()
		rdb.Del(ctx, name)
		rdb.Publish(ctx, l.Channel+":"+head, "0")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		holders = append(holders, holderOf(t, rdb, name))
		// A Java waiter queues; latchkey releases to it; it takes the
		// lock, and holds it into the next round.
		jv = fmt.Sprintf("%s:%d", java, 100+i)
		rdb.RPush(ctx, l.FairQueue, jv)
		rdb.ZAdd(ctx, l.FairDeadlines, redis.Z{Score: float64(time.Now().Add(5 * time.Minute).UnixMilli()), Member: jv})
		wake := rdb.Subscribe(ctx, l.Channel+":"+jv)
		if _, err := wake.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		<-wake.Channel()
		wake.Close()
		rdb.LRem(ctx, l.FairQueue, 1, jv)
		rdb.ZRem(ctx, l.FairDeadlines, jv)
		rdb.HSet(ctx, name, jv, 1)
		rdb.PExpire(ctx, name, 30*time.Second)
		holders = append(holders, jv)
		time.Sleep(20 * time.Millisecond)
	}
	// The last Java hold is taken with nothing published, and still held:
	// the next look would see it, but none is due.
	checkHeard(t, w, holders[:len(holders)-1])
}

// testWatchFairMissed takes a latchkey fair lock 5 times with nobody
// queued, each hold 10ms: a fair lock's release with nobody queued
// publishes nothing, and watch, looking every second, sees few of them.
// Those it does not see it counts by the fencing counter, which each
// acquisition draws: every hold is seen or counted as missed.
func testWatchFairMissed(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wfairmiss")
	f := fairlock.New(rdb, name)
	if err := f.Lock(t.Context()); err != nil { // a counter to start from
		t.Fatal(err)
	}
	if err := f.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := c.startWatch(t, "watch", "-every", "1s", name)
	w.waitFor(t, "now: ")
	var holders []string
	for range 5 {
		if err := f.Lock(t.Context()); err != nil {
			t.Fatal(err)
		}
		holders = append(holders, holderOf(t, rdb, name))
		time.Sleep(10 * time.Millisecond)
		if err := f.Unlock(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // a periodic look
	checkHeard(t, w, holders)
}

// testWatchExpiry lets a Java client's mutex hold of 1.5s expire while
// another Java client waits on its TTL and takes the lock at once: watch,
// looking when the TTL runs out, says that the first hold expired and the
// second acquired, not that one handed the lock to the other.
//
// watch must see the first hold before it runs out: on a loaded machine
// the binary may take longer than 1.5s to start, and then saw the lock
// free, with no TTL to look at. The hold is staged again, its TTL
// doubled, until watch's first look sees it.
func testWatchExpiry(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wexpiry")
	rdb.Set(ctx, namesOf(name).lock.Token, 7, time.Minute) // a mutex's counter: no doubt of the kind
	defer rdb.Del(context.Background(), name, namesOf(name).lock.Token)
	var w *watchRun
	for ttl := 1500 * time.Millisecond; ; ttl *= 2 {
		rdb.HSet(ctx, name, java+":1", 1)
		rdb.PExpire(ctx, name, ttl)
		w = c.startWatch(t, "watch", "-every", "1m", name)
		if strings.Contains(w.waitFor(t, "now: "), java+":1") {
			break
		}
		w.stop(t)
		if ttl >= 12*time.Second {
			t.Fatalf("watch's first look came after a hold of %v ran out", ttl)
		}
	}
	for rdb.Exists(ctx, name).Val() == 1 { // the waiter sleeps on the TTL
		time.Sleep(time.Millisecond)
	}
	rdb.HSet(ctx, name, java+":2", 1)
	rdb.PExpire(ctx, name, 30*time.Second)
	line := w.waitFor(t, java+":2")
	if !strings.Contains(line, "expired: the hold of "+java+":1 ran out") || strings.Contains(line, "handoff") {
		t.Errorf("an expiry and an acquisition printed as %q", line)
	}
	w.stop(t)
}

// testWatchLateStart starts watch on a Java client's hold 4s into its 12s
// lease, the hold left to run down: watch says it was not renewed for as
// long as it has not been, from the lease (-lease 12s), not from when
// watch first saw it. Before, it under-reported by the 4s it had not
// watched (82.7s for 97s in the drill).
func testWatchLateStart(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wlate")
	rdb.HSet(ctx, name, java+":1", 1)
	rdb.PExpire(ctx, name, 12*time.Second)
	renewed := time.Now()
	defer rdb.Del(context.Background(), name)
	time.Sleep(4 * time.Second)
	w := c.startWatch(t, "watch", "-json", "-every", "1m", "-lease", "12s", name)
	line := w.waitForWithin(t, `"event":"not_renewed"`, 10*time.Second)
	real := time.Since(renewed)
	w.stop(t)
	var ev WatchEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(ev.NotRenewedMs) * time.Millisecond; got < real-1500*time.Millisecond || got > real+500*time.Millisecond {
		t.Errorf("not renewed for %v said, %v real", got, real)
	}
}
