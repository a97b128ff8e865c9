package main

import (
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/fairlock"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// TestWatchCluster runs watch against a Redis Cluster, whose deployment
// may use sharded pub/sub (SPUBLISH): an unseen Redisson release and a
// latchkey force-unlock are both heard.
func TestWatchCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cc := cl.Client(t)
	t.Cleanup(func() { _ = latchkey.Close(cc) })
	c := cli{bin: build(t), conn: []string{"-cluster", "-redis", strings.Join(cl.Addrs(), ",")}}
	ctx := t.Context()
	hub := notify.New(cc)
	pub, err := hub.PublishCommand(ctx)
	_ = hub.Close()
	if err != nil {
		t.Fatal(err)
	}
	name := testName(t, "wcluster")
	w := c.startWatch(t, "watch", "-every", "1m", name)
	w.waitFor(t, "now: ")
	cc.HSet(ctx, name, java+":4", 1)
	cc.PExpire(ctx, name, 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	cc.Del(ctx, name)
	if err := cc.Do(ctx, pub, namesOf(name).lock.Channel, "0").Err(); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "released, hold not seen: unlock")

	m := mutex.New(cc, name)
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	owner := c.inspect(t, name).Holders[0].Owner
	if _, errOut, code := c.run(t, "unlock", "-yes", name); code != 0 {
		t.Fatalf("unlock: exit %d: %s", code, errOut)
	}
	if line := w.waitFor(t, "force-unlocked"); !strings.Contains(line, "was held by "+owner) {
		t.Errorf("force-unlock line %q does not name %s", line, owner)
	}
	w.stop(t)
	t.Logf("publish command: %s", pub)
}

// TestWatchClusterFair watches a latchkey fair lock on a Redis Cluster:
// with sharded pub/sub, which has no patterns, watch follows the channel
// of each waiter queued at its latest look. A handoff to a waiter queued
// then is heard; one to a waiter (of another process) that queued after
// it, with no look between, is not, and watch says it may have missed
// holds when its next look finds the new holder.
func TestWatchClusterFair(t *testing.T) {
	cl := redistest.SharedCluster(t)
	c := cli{bin: build(t), conn: []string{"-cluster", "-redis", strings.Join(cl.Addrs(), ",")}}
	ctx := t.Context()
	clients := make([]redis.UniversalClient, 3) // three processes' worth: a Hub each
	for i := range clients {
		cc := cl.Client(t)
		t.Cleanup(func() { _ = latchkey.Close(cc) })
		clients[i] = cc
	}
	name := testName(t, "wclfair")
	queue := namesOf(name).lock.FairQueue
	f1, f2, f3 := fairlock.New(clients[0], name), fairlock.New(clients[1], name), fairlock.New(clients[2], name)
	if err := f1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	w2 := wait(f2.Lock, f2.Unlock)
	defer w2.stop()
	queued(t, clients[0], queue, 1)
	w := c.startWatch(t, "watch", "-every", "2s", name)
	w.waitFor(t, "1 queued")
	time.Sleep(200 * time.Millisecond) // the subscription to the waiter's channel, made after the look
	if err := f1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-w2.got
	w.waitFor(t, "handoff")
	w3 := wait(f3.Lock, f3.Unlock)
	defer w3.stop()
	queued(t, clients[0], queue, 1)
	w2.stop() // releases to the third, unheard
	<-w3.got
	w.waitForWithin(t, "may have missed holds", 10*time.Second)
	for _, l := range w.stop(t) {
		if strings.Contains(l, "hold not seen") {
			t.Errorf("a hold seen said unseen: %s", l)
		}
	}
}
