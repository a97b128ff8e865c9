package notify_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// cmdCounter counts the PUBSUB SHARDNUMSUB probes a client sends.
type cmdCounter struct {
	n atomic.Int32 // PUBSUB SHARDNUMSUB probes
}

func (c *cmdCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *cmdCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (c *cmdCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) >= 2 && strings.EqualFold(fmt.Sprint(args[0]), "pubsub") && strings.EqualFold(fmt.Sprint(args[1]), "shardnumsub") {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// channelsOnMasters returns, for each master of cc, a channel name with a
// hash tag that the master owns, plus a second channel on the first master.
func channelsOnMasters(t *testing.T, cc *redis.ClusterClient, masters int) (chans []string, addrs []string) {
	t.Helper()
	ctx := context.Background()
	seen := map[string]bool{}
	for i := 0; len(chans) < masters && i < 10000; i++ {
		ch := fmt.Sprintf("pubsub-test:{%s-%d}:channel", t.Name(), i)
		node, err := cc.MasterForKey(ctx, ch)
		if err != nil {
			t.Fatal(err)
		}
		if addr := node.Options().Addr; !seen[addr] {
			seen[addr] = true
			chans = append(chans, ch)
			addrs = append(addrs, addr)
		}
	}
	if len(chans) != masters {
		t.Fatalf("found channels on %d masters, want %d", len(chans), masters)
	}
	return chans, addrs
}

// nodeClient returns a plain client of the cluster node at addr.
func nodeClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func shardNumSub(t *testing.T, c *redis.Client, ch string) int64 {
	t.Helper()
	m, err := c.PubSubShardNumSub(context.Background(), ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[ch]
}

// On a Redis 7 cluster the Hub uses sharded pub/sub, as Redisson does: one
// connection per master it needs, SSUBSCRIBE there, SPUBLISH as the
// scripts' publish command.
func TestHub_sharded(t *testing.T) {
	cl := redistest.SharedCluster(t)
	name := clientName(t)
	cc := cl.Client(t, func(o *redis.ClusterOptions) { o.ClientName = name })
	var probes cmdCounter
	cc.AddHook(&probes)
	ctx := context.Background()
	if err := cc.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	h := newHub(t, cc, notify.WithIdleTimeout(300*time.Millisecond))

	cmd, err := h.PublishCommand(ctx)
	if err != nil || cmd != "SPUBLISH" {
		t.Fatalf("PublishCommand = %q, %v; want SPUBLISH", cmd, err)
	}
	chans, addrs := channelsOnMasters(t, cc, 3)
	// A second channel on the first master shares its connection.
	extra := strings.Replace(chans[0], ":channel", ":other", 1)

	subs := map[string]*notify.Subscription{}
	for _, ch := range append(chans[:2:2], extra) {
		subs[ch] = subscribe(t, h, ch, notify.WakeOne)
	}
	if st := h.Stats(); st.Connections != 2 || st.Channels != 3 {
		t.Fatalf("channels on 2 masters: Stats() = %+v, want 2 connections, 3 channels", st)
	}
	subs[chans[2]] = subscribe(t, h, chans[2], notify.WakeOne)
	if st := h.Stats(); st.Connections != 3 {
		t.Fatalf("channels on 3 masters: Stats() = %+v, want 3 connections", st)
	}
	if n := probes.n.Load(); n != 1 {
		t.Errorf("PUBSUB SHARDNUMSUB probed %d times, want once", n)
	}

	for i, addr := range addrs {
		node := nodeClient(t, addr)
		if n := shardNumSub(t, node, chans[i]); n != 1 {
			t.Errorf("master %s: SHARDNUMSUB %s = %d, want 1", addr, chans[i], n)
		}
		conns := pubsubConns(t, node, name)
		if len(conns) != 1 {
			t.Errorf("master %s: %d subscriber connections of the Hub, want 1: %v", addr, len(conns), conns)
			continue
		}
		want := "1"
		if i == 0 {
			want = "2"
		}
		if got := field(conns[0], "ssub"); got != want {
			t.Errorf("master %s: ssub=%s, want %s", addr, got, want)
		}
	}

	for ch, sub := range subs {
		if n := cc.SPublish(ctx, ch, "0").Val(); n != 1 {
			t.Fatalf("SPUBLISH %s reached %d subscribers, want 1", ch, n)
		}
		if !woken(sub, wakeTimeout) {
			t.Fatalf("SPUBLISH %s did not wake its waiter", ch)
		}
	}

	for _, sub := range subs {
		sub.Close()
	}
	eventually(t, wakeTimeout, func() bool { return h.Stats().Connections == 0 }, "idle sharded connections still open: %+v", func() any { return h.Stats() })
	for i, addr := range addrs {
		node := nodeClient(t, addr)
		eventually(t, wakeTimeout, func() bool { return len(pubsubConns(t, node, name)) == 0 }, "master %s still lists the Hub's connection", addr)
		if n := shardNumSub(t, node, chans[i]); n != 0 {
			t.Errorf("master %s: SHARDNUMSUB %s = %d after the idle close, want 0", addr, chans[i], n)
		}
	}
}

// A sharded connection keeps its last channel subscribed until it closes
// when idle (without a channel it would redial a random master), but only
// that one: channels that had come and gone are unsubscribed once their
// linger time is over.
func TestHub_shardedLeavesOneChannelAtMost(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cc := cl.Client(t)
	h := newHub(t, cc) // the default idle timeout: longer than the test
	ctx := context.Background()
	chans, addrs := channelsOnMasters(t, cc, 1)
	node := nodeClient(t, addrs[0])
	var names []string
	for i := range 5 {
		ch := fmt.Sprintf("%s:%d", chans[0], i)
		names = append(names, ch)
		sub := subscribe(t, h, ch, notify.WakeOne)
		sub.Close()
	}
	// Each channel lingers (WithLinger) and then goes, but the last one to go
	// stays subscribed while the connection is open, whichever it is.
	eventually(t, wakeTimeout, func() bool {
		n := 0
		for _, ch := range names {
			n += int(shardNumSub(t, node, ch))
		}
		return n <= 1
	}, "channels nobody waits on stay subscribed")
	// The lingering channel is still usable.
	sub := subscribe(t, h, names[4], notify.WakeOne)
	if n := cc.SPublish(ctx, names[4], "0").Val(); n != 1 {
		t.Fatalf("SPUBLISH reached %d subscribers, want 1", n)
	}
	if !woken(sub, wakeTimeout) {
		t.Fatal("waiter on the lingering channel not woken")
	}
}

// A sharded connection killed by the server reconnects to the master that
// owns its channels, and its waiters are woken and hear later messages.
func TestHub_shardedReconnect(t *testing.T) {
	cl := redistest.SharedCluster(t)
	name := clientName(t)
	cc := cl.Client(t, func(o *redis.ClusterOptions) { o.ClientName = name })
	h := newHub(t, cc)
	ctx := context.Background()
	chans, addrs := channelsOnMasters(t, cc, 2)
	a := subscribe(t, h, chans[0], notify.WakeOne)
	b := subscribe(t, h, chans[1], notify.WakeOne)
	node := nodeClient(t, addrs[0])
	if err := node.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	if !woken(a, 10*time.Second) {
		t.Fatal("waiter on the killed connection not woken")
	}
	if woken(b, quietPeriod) {
		t.Error("waiter on another master's connection woken")
	}
	if n := cc.SPublish(ctx, chans[0], "0").Val(); n != 1 {
		t.Fatalf("SPUBLISH after the reconnect reached %d subscribers, want 1", n)
	}
	if !woken(a, wakeTimeout) {
		t.Fatal("SPUBLISH after the reconnect did not wake the waiter")
	}
	if conns := pubsubConns(t, node, name); len(conns) != 1 {
		t.Errorf("master %s: %d subscriber connections, want 1", addrs[0], len(conns))
	}
}

// Without sharded pub/sub (a plain client, or WithSharded(false) on a
// cluster) the Hub uses SUBSCRIBE and PUBLISH over one connection.
func TestHub_PublishCommand_unsharded(t *testing.T) {
	ctx := context.Background()
	t.Run("plain client", func(t *testing.T) {
		h := newHub(t, redistest.SharedServer(t).Client(t))
		if cmd, err := h.PublishCommand(ctx); err != nil || cmd != "PUBLISH" {
			t.Fatalf("PublishCommand = %q, %v; want PUBLISH", cmd, err)
		}
	})
	t.Run("cluster WithSharded(false)", func(t *testing.T) {
		cc := redistest.SharedCluster(t).Client(t)
		h := newHub(t, cc, notify.WithSharded(false))
		if cmd, err := h.PublishCommand(ctx); err != nil || cmd != "PUBLISH" {
			t.Fatalf("PublishCommand = %q, %v; want PUBLISH", cmd, err)
		}
		chans, _ := channelsOnMasters(t, cc, 3)
		var subs []*notify.Subscription
		for _, ch := range chans {
			subs = append(subs, subscribe(t, h, ch, notify.WakeOne))
		}
		if st := h.Stats(); st.Connections != 1 {
			t.Errorf("Stats() = %+v, want one connection", st)
		}
		for i, ch := range chans {
			// PUBLISH in a cluster reaches subscribers on every node.
			if err := cc.Publish(ctx, ch, "0").Err(); err != nil {
				t.Fatal(err)
			}
			if !woken(subs[i], wakeTimeout) {
				t.Fatalf("PUBLISH %s did not wake its waiter", ch)
			}
		}
	})
	t.Run("WithSharded(true) on a plain client", func(t *testing.T) {
		c := redistest.SharedServer(t).Client(t)
		h := newHub(t, c, notify.WithSharded(true))
		if cmd, err := h.PublishCommand(ctx); err != nil || cmd != "SPUBLISH" {
			t.Fatalf("PublishCommand = %q, %v; want SPUBLISH", cmd, err)
		}
		sub := subscribe(t, h, channelName(t, 0), notify.WakeOne)
		if n := c.SPublish(ctx, channelName(t, 0), "0").Val(); n != 1 {
			t.Fatalf("SPUBLISH reached %d subscribers, want 1", n)
		}
		if !woken(sub, wakeTimeout) {
			t.Fatal("SPUBLISH did not wake the waiter")
		}
	})
}
