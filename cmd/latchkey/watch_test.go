package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/rwlock"
	"github.com/redis/go-redis/v9"
)

// TestWatch runs watch against a real server while Redisson-layout
// clients (written here as a Java client writes its keys and messages)
// and latchkey's primitives change what it follows.
func TestWatch(t *testing.T) {
	srv := redistest.SharedServer(t)
	rdb := locktest.Client(t, srv)
	c := cli{bin: build(t), conn: []string{"-redis", srv.Addr()}}
	t.Run("unseen releases", func(t *testing.T) { t.Parallel(); testWatchUnseen(t, c, rdb) })
	t.Run("unseen release json", func(t *testing.T) { t.Parallel(); testWatchUnseenJSON(t, c, rdb) })
	t.Run("periodic under a flood", func(t *testing.T) { t.Parallel(); testWatchFlood(t, c, rdb) })
	t.Run("force-unlock json", func(t *testing.T) { t.Parallel(); testWatchForcedJSON(t, c, rdb) })
	t.Run("force-unlock rwlock", func(t *testing.T) { t.Parallel(); testWatchForcedRW(t, c, rdb) })
	t.Run("force-unlock fairlock", func(t *testing.T) { t.Parallel(); testWatchForcedFair(t, c, rdb) })
	t.Run("own subscriptions", func(t *testing.T) { t.Parallel(); testWatchSelf(t, c, rdb) })
	t.Run("not renewed", func(t *testing.T) { t.Parallel(); testWatchNotRenewed(t, c, rdb) })
	t.Run("renewed", func(t *testing.T) { t.Parallel(); testWatchRenewed(t, c, rdb) })
}

// testWatchUnseen takes and releases Redisson-layout holds of 0.3s, as a
// Java client does (the acquisition publishes nothing, the unlock "0" on
// the lock's channel), between looks: -every is a minute, and the next
// hold waits for the look that the message causes. Each release must be
// printed, exactly once.
func testWatchUnseen(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wunseen")
	channel := namesOf(name).lock.Channel
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	const holds = 6
	for i := range holds {
		owner := java + ":" + string(rune('1'+i))
		rdb.HSet(ctx, name, owner, 1)
		rdb.PExpire(ctx, name, 30*time.Second)
		time.Sleep(300 * time.Millisecond)
		rdb.Del(ctx, name)
		rdb.Publish(ctx, channel, "0")
		// Free until the look that the message causes is done.
		w.waitFor(t, "released, hold not seen")
	}
	time.Sleep(300 * time.Millisecond) // room for a line too many
	lines := w.stop(t)
	unseen := 0
	for _, l := range lines {
		if strings.Contains(l, "released, hold not seen") {
			unseen++
			if !strings.Contains(l, "unlock") || !strings.Contains(l, channel) {
				t.Errorf("an unseen release that does not say what and where: %s", l)
			}
		}
	}
	if unseen != holds {
		t.Errorf("%d unseen releases printed, want %d:\n%s", unseen, holds, strings.Join(lines, "\n"))
	}
}

// testWatchUnseenJSON releases a Redisson-layout read hold between looks
// under watch -json: one unseen_release event says where and what. The
// name holds a pattern's special characters, which watch's subscriptions
// must match literally: a message on a channel that they would match
// otherwise (the decoy) is not heard.
func testWatchUnseenJSON(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	base := testName(t, "wunseenjson")
	name := base + `*?[ab]\`
	decoy := namesOf(base + "xyzqa").rw.Channel // what the name, as a pattern, matches
	channel := namesOf(name).rw.Channel
	w := c.startWatch(t, "watch", "-json", "-every", "1m", name)
	w.waitFor(t, `"event":"now"`)
	rdb.HSet(ctx, name, "mode", "read", java+":3", 1)
	rdb.PExpire(ctx, name, 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	rdb.Publish(ctx, decoy, "1")
	rdb.Del(ctx, name)
	rdb.Publish(ctx, channel, "0")
	line := w.waitFor(t, `"event":"unseen_release"`)
	w.stop(t)
	var ev WatchEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Channel != channel || ev.Message != "0" || ev.What != "read-unlock" || ev.State == nil {
		t.Errorf("unseen_release %s: want channel %s, message 0, what read-unlock, and the state", line, channel)
	}
}

// testWatchFlood publishes unrelated messages on the lock's channel
// without pause, and takes a hold the way Redisson does, publishing
// nothing: a look must still find it, within a generous bound of -every.
func testWatchFlood(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wflood")
	w := c.startWatch(t, "watch", "-every", "1s", name)
	w.waitFor(t, "now: ")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			rdb.Publish(ctx, namesOf(name).lock.Channel, "unrelated")
			time.Sleep(2 * time.Millisecond)
		}
	})
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(300 * time.Millisecond)
	rdb.HSet(ctx, name, java+":9", 1)
	rdb.PExpire(ctx, name, 30*time.Second)
	defer rdb.Del(context.Background(), name)
	w.waitForWithin(t, "acquired by "+java+":9", 10*time.Second)
	cancel()
	wg.Wait()
	lines := w.stop(t)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"unrelated"`) }) {
		t.Error("the unrelated messages went unreported")
	}
}

// testWatchForcedJSON force-unlocks a latchkey mutex with the CLI's unlock
// under watch -json: one "forced" event naming the holder, and no release
// of any kind.
func testWatchForcedJSON(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wforced")
	m := mutex.New(rdb, name)
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	owner := c.inspect(t, name).Holders[0].Owner
	w := c.startWatch(t, "watch", "-json", "-every", "1m", name)
	w.waitFor(t, `"event":"now"`)
	if _, errOut, code := c.run(t, "unlock", "-yes", name); code != 0 {
		t.Fatalf("unlock: exit %d: %s", code, errOut)
	}
	w.waitFor(t, `"event":"forced"`)
	time.Sleep(300 * time.Millisecond) // room for a release line that must not come
	var forced int
	for _, l := range w.stop(t) {
		var ev WatchEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("watch -json printed %q: %v", l, err)
		}
		switch ev.Event {
		case "forced":
			forced++
			if !slices.Equal(ev.Owners, []string{owner}) || ev.State == nil || len(ev.State.Holders) != 0 {
				t.Errorf("forced event %s: want owners [%s] and nothing held", l, owner)
			}
		case "released", "unseen_release":
			t.Errorf("a force-unlock printed as a release: %s", l)
		}
	}
	if forced != 1 {
		t.Errorf("%d forced events, want 1", forced)
	}
}

// testWatchForcedRW force-unlocks a write-held read-write lock with the
// library's ForceUnlock under watch.
func testWatchForcedRW(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wforcedrw")
	rw := rwlock.New(rdb, name)
	if err := rw.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	owner := c.inspect(t, name).Holders[0].Owner
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	if ok, err := rwlock.New(rdb, name).ForceUnlock(t.Context()); err != nil || !ok {
		t.Fatalf("ForceUnlock: %v, %v", ok, err)
	}
	line := w.waitFor(t, "force-unlocked")
	if !strings.Contains(line, "was held by "+owner) {
		t.Errorf("force-unlock line %q does not name %s", line, owner)
	}
	time.Sleep(300 * time.Millisecond)
	for _, l := range w.stop(t) {
		if strings.Contains(l, "released") {
			t.Errorf("a force-unlock printed as a release: %s", l)
		}
	}
}

// testWatchForcedFair force-unlocks a latchkey fair lock with the CLI's
// unlock while a Redisson waiter queues: the unlock's "0" on that waiter's
// channel is the force-unlock's wake-up, not a release of its own.
func testWatchForcedFair(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wforcedfair")
	m := fairlock.New(rdb, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	l := namesOf(name).lock
	waiter := java + ":8"
	rdb.RPush(ctx, l.FairQueue, waiter)
	rdb.ZAdd(ctx, l.FairDeadlines, redis.Z{Score: float64(time.Now().Add(5 * time.Minute).UnixMilli()), Member: waiter})
	defer rdb.Del(context.Background(), name, l.FairQueue, l.FairDeadlines, l.Heartbeats, l.FairToken, l.Grant)
	owner := c.inspect(t, name).Holders[0].Owner
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	wake := rdb.Subscribe(ctx, l.Channel+":"+waiter)
	defer wake.Close()
	if _, err := wake.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := c.run(t, "unlock", "-yes", name); code != 0 {
		t.Fatalf("unlock: exit %d: %s", code, errOut)
	}
	if line := w.waitFor(t, "force-unlocked"); !strings.Contains(line, "was held by "+owner) {
		t.Errorf("force-unlock line %q does not name %s", line, owner)
	}
	select {
	case <-wake.Channel():
	case <-time.After(5 * time.Second):
		t.Fatal("the force-unlock woke no Redisson waiter")
	}
	time.Sleep(300 * time.Millisecond)
	for _, l := range w.stop(t) {
		if strings.Contains(l, "released") {
			t.Errorf("a force-unlock printed as a release: %s", l)
		}
	}
}

// testWatchSelf watches a plain integer, which only its listeners tell
// a semaphore from a latch: watch's own subscriptions to both channels
// must not make it either.
func testWatchSelf(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wself")
	rdb.Set(t.Context(), name, 3, 30*time.Second)
	defer rdb.Del(context.Background(), name)
	w := c.startWatch(t, "watch", "-json", "-every", "1m", name)
	line := w.waitFor(t, `"event":"now"`)
	// Nor does a reader elsewhere count watch as a listener.
	if st := c.inspect(t, name); st.Kind != kindCounter {
		t.Errorf("inspect during a watch: kind %s, want %s", st.Kind, kindCounter)
	}
	w.stop(t)
	var ev WatchEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.State == nil || ev.State.Kind != kindCounter {
		t.Errorf("watch of a plain integer: %s, want kind %s", line, kindCounter)
	}
}

// testWatchNotRenewed leaves a Redisson-layout hold's TTL of 6s (its
// lease, -lease 6s) to run down: watch says once that it is not renewed,
// before it expires.
func testWatchNotRenewed(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "wstale")
	rdb.HSet(ctx, name, java+":5", 1)
	rdb.PExpire(ctx, name, 6*time.Second)
	defer rdb.Del(context.Background(), name)
	w := c.startWatch(t, "watch", "-json", "-every", "1m", "-lease", "6s", name)
	w.waitFor(t, `"event":"now"`)
	line := w.waitForWithin(t, `"event":"not_renewed"`, 10*time.Second)
	var ev WatchEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.NotRenewedMs <= 0 || ev.ExpiresInMs <= 0 || ev.NotRenewedMs+ev.ExpiresInMs > 6000 {
		t.Errorf("not_renewed %s: want both durations positive, summing to at most the 6s lease", line)
	}
	w.waitForWithin(t, `"event":"released"`, 10*time.Second) // the TTL ran out
	n := 0
	for _, l := range w.stop(t) {
		if strings.Contains(l, `"event":"not_renewed"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d not_renewed events, want 1", n)
	}
}

// testWatchRenewed holds a latchkey mutex whose watchdog renews its 9s
// lease every 3s, for four renewals: watch never says it is not renewed
// (it would past 4.5s without one).
func testWatchRenewed(t *testing.T, c cli, rdb redis.UniversalClient) {
	name := testName(t, "wrenewed")
	m := mutex.New(rdb, name, mutex.WithWatchdogTimeout(9*time.Second))
	if err := m.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Unlock(context.Background()) }()
	w := c.startWatch(t, "watch", "-every", "1m", "-lease", "9s", name)
	w.waitFor(t, "now: ")
	time.Sleep(13 * time.Second)
	for _, l := range w.stop(t) {
		if strings.Contains(l, "not renewed") || strings.Contains(l, "released") {
			t.Errorf("a renewed hold: %s", l)
		}
	}
}
