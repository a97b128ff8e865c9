package countdownlatch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/countdownlatch"
	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// splitName returns a latch name with a hash tag of its own whose key and
// channel live on different masters of the cluster c is a client of.
func splitName(t *testing.T, c *redis.ClusterClient) string {
	t.Helper()
	ctx := context.Background()
	for i := range 100 {
		name := fmt.Sprintf("countdownlatch-test:{%s-%d}", t.Name(), i)
		k, err1 := c.MasterForKey(ctx, name)
		ch, err2 := c.MasterForKey(ctx, channel(name))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if k.Options().Addr != ch.Options().Addr {
			return name
		}
	}
	t.Fatal("no name splits key and channel over two masters")
	return ""
}

// On a cluster, a name with a hash tag of its own puts the latch's channel
// (always wrapped in braces again) in another slot than its key, where a
// script can neither declare it nor SPUBLISH to it. The latch publishes
// from the client instead, to the channel's own shard, and works as usual.
func TestLatch_cluster_bracedName(t *testing.T) {
	noLeaks(t)
	cl := redistest.SharedCluster(t)
	ctx := context.Background()
	c := release(t, cl.Client(t))
	name := splitName(t, c)
	if keys.Slot(name) == keys.Slot(channel(name)) {
		t.Fatal("key and channel in one slot")
	}
	send := rt.Of(c).Sender(nil, 0)
	pub, err := send.Publish(ctx)
	if err != nil || pub != "SPUBLISH" {
		t.Fatalf("PublishCommand = %q, %v; want SPUBLISH on Redis 7", pub, err)
	}

	// Why: the script with both names is refused, and a script publishing
	// to the channel's shard from the key's shard fails (after changing
	// the key: scripts do not roll back).
	c.Set(ctx, name, 1, 0)
	err = send.Send(ctx, scripts.LatchCountDown{Name: name, Channel: channel(name)}.Request()).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Errorf("count-down with the channel in KEYS: %v, want CROSSSLOT", err)
	}
	err = c.Eval(ctx, "return redis.call('spublish', ARGV[1], '0')", []string{name}, channel(name)).Err()
	if err == nil {
		t.Error("SPUBLISH to another shard's channel from a script succeeded")
	}
	c.Del(ctx, name)

	msgs := listen(t, c, name, true)
	l := countdownlatch.New(c, name)
	if ok, err := l.TrySetCount(ctx, 2); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	expect(t, msgs, "1")
	var dones []<-chan error
	var hubs []*pubsub.Hub
	for range 2 {
		o := release(t, cl.Client(t))
		hubs = append(hubs, pubsub.Shared(o))
		for range 3 {
			dones = append(dones, goWait(ctx, countdownlatch.New(o, name)))
		}
	}
	for _, h := range hubs {
		waiters(t, h, 3)
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	quiet(t, msgs)
	for _, d := range dones {
		blocked(t, d, "count 1")
	}
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, msgs, "0")
	for _, d := range dones {
		released(t, d, fast, "count 0")
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Error("key left behind")
	}

	// Delete, too, releases the waiters through the channel's shard.
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	expect(t, msgs, "1")
	o := release(t, cl.Client(t))
	done := goWait(ctx, countdownlatch.New(o, name))
	waiters(t, pubsub.Shared(o), 1)
	blocked(t, done, "count 1")
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	expect(t, msgs, "0")
	released(t, done, fast, "after Delete")
	if err := l.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	quiet(t, msgs)
}
