package rt_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
)

// A replica that attaches after a master's replicas were counted is
// waited for by the writes sent a second after it is online, the count
// being read again along a write (no round trip of its own), and not by
// every write: a burst of writes reads INFO once.
func TestReplicas_attachedCountedWithinASecond(t *testing.T) {
	master := redistest.StartServer(t)
	c := master.Client(t)
	ctx := context.Background()
	if err := scripts.Preload(ctx, c); err != nil {
		t.Fatal(err)
	}
	waits, infos := &locktest.Commands{Only: "wait"}, &locktest.Commands{Only: "info"}
	c.AddHook(waits)
	c.AddHook(infos)
	set := scripts.Compose("replicas_attached", "redis.call('set', KEYS[1], ARGV[1]) return 1")
	write := func(v int) rt.Reply {
		t.Helper()
		r := rt.Of(c).Sender(nil, time.Second).Send(ctx, scripts.Request{Script: set, Keys: []string{"attached"}, Args: []any{v}, Synced: true})
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return r
	}
	for i := range 20 {
		if r := write(i); r.Replicas != 0 {
			t.Fatalf("write %d waited for %d replicas of a master without any", i, r.Replicas)
		}
	}
	if n := infos.N(); n != 1 {
		t.Errorf("%d INFO commands for a burst of writes, want 1", n)
	}
	replica := redistest.StartReplica(t, master)
	time.Sleep(rt.ReplicaRecheck + 100*time.Millisecond)
	r := write(100)
	if r.Replicas != 1 || r.Acked != 1 || waits.N() == 0 {
		t.Fatalf("a write %v after a replica was online waited for %d replicas (%d acked, %d WAITs sent), want 1",
			rt.ReplicaRecheck, r.Replicas, r.Acked, waits.N())
	}
	if got := replica.Client(t).Get(ctx, "attached").Val(); got != "100" {
		t.Fatalf("the replica has %q right after the synced write, want 100", got)
	}
}
