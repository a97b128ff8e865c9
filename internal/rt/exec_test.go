package rt_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/rt"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lockerr"
	"github.com/latchkey/latchkey/internal/locktest"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// opsCall is a request of the mutex's script for op ("acquire" or
// "release"), for owner on lock name.
func opsCall(name, op, owner, reentrant, req string) scripts.Request {
	l := keys.LockOf(name)
	if op == "release" {
		return scripts.MutexRelease{Lock: l, Owner: owner, Lease: 30 * time.Second, Reentrant: reentrant == "1",
			Yield: scripts.NoYield, Record: req}.Request()
	}
	return scripts.MutexAcquire{Lock: l, Owner: owner, Entry: "hub/" + owner, Lease: 30 * time.Second,
		Reentry: reentrant, Record: req}.Request()
}

// send sends req on c's send path, waiting up to sync for replicas.
func send(ctx context.Context, c redis.UniversalClient, req scripts.Request, sync time.Duration) rt.Reply {
	return rt.Of(c).Sender(nil, sync).Send(ctx, req)
}

// A request sent twice with the same record is applied once, and the second
// run answers as the first did: the release of a hold counted twice leaves
// one hold, however often that request is resent.
func TestExec_onceAppliesARequestOnce(t *testing.T) {
	check := func(t *testing.T, c redis.UniversalClient) {
		rt.KeepRecords(c) // the second send stands for a resend
		ctx := context.Background()
		name := locktest.Name(t, "exec-once") // fresh records on every run (-count)
		for i := 0; i < 2; i++ {
			w := opsCall(name, "acquire", "a:1", "1", keys.Once(name, "acq"+string(rune('0'+i))))
			if err := send(ctx, c, w, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		release := opsCall(name, "release", "a:1", "1", keys.Once(name, "rel"))
		for i := 0; i < 3; i++ {
			n, err := scripts.Int(send(ctx, c, release, 0).Cmd)
			if err != nil || n != 0 {
				t.Fatalf("release #%d = %d, %v; want 0 (one hold left) every time", i+1, n, err)
			}
		}
		if got := c.HGet(ctx, name, "a:1").Val(); got != "1" {
			t.Fatalf("hold count %q after one release resent three times, want 1", got)
		}
		// The acquisition's token, over 2^50 on a new counter, survives the
		// record exactly.
		acq := opsCall(name, "acquire", "a:1", "1", keys.Once(name, "acq-again"))
		first, err := scripts.Ints(send(ctx, c, acq, 0).Cmd)
		if err != nil {
			t.Fatal(err)
		}
		again, err := scripts.Ints(send(ctx, c, acq, 0).Cmd)
		if err != nil || len(again) != 3 || again[1] != first[1] || first[1] < 1<<50 {
			t.Fatalf("resent acquisition = %v, %v; first %v", again, err, first)
		}
		if got := c.HGet(ctx, name, "a:1").Val(); got != "2" {
			t.Fatalf("hold count %q after one acquisition resent, want 2", got)
		}
	}
	t.Run("miniredis", func(t *testing.T) {
		_, c := redistest.Miniredis(t)
		check(t, c)
	})
	t.Run("server", func(t *testing.T) { check(t, redistest.SharedServer(t).Client(t)) })
	t.Run("cluster", func(t *testing.T) { check(t, redistest.SharedCluster(t).Client(t)) })
}

// A plain release (a fresh owner id, held once) reads its record only when
// it finds nothing to release, which is where a resend lands.
func TestExec_oncePlainReleaseResent(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	rt.KeepRecords(c) // a request sent twice stands for a resend
	ctx := context.Background()
	name := locktest.Name(t, "exec-once") // fresh records on every run (-count)
	if err := send(ctx, c, opsCall(name, "acquire", "b:1", "0", ""), 0).Err(); err != nil {
		t.Fatal(err)
	}
	release := opsCall(name, "release", "b:1", "0", keys.Once(name, "rel"))
	for i := 0; i < 2; i++ {
		if n, err := scripts.Int(send(ctx, c, release, 0).Cmd); err != nil || n != 1 {
			t.Fatalf("release #%d = %d, %v; want 1 both times", i+1, n, err)
		}
	}
	other := opsCall(name, "release", "b:1", "0", keys.Once(name, "other"))
	if n, err := scripts.Int(send(ctx, c, other, 0).Cmd); err != nil || n != -1 {
		t.Fatalf("another release request = %d, %v; want -1, not held", n, err)
	}
}

// With a replica, a synced write comes back acknowledged by it, and the
// replica has the write; with the replica frozen, the write comes back
// unacknowledged after the timeout, with an error matching
// ErrNotReplicated. Without replicas no WAIT is sent at all.
func TestExec_syncWaitsForReplicas(t *testing.T) {
	master := redistest.StartServer(t)
	replica := redistest.StartReplica(t, master)
	c := master.Client(t)
	ctx := context.Background()
	if err := scripts.Preload(ctx, c); err != nil { // no NOSCRIPT round to count
		t.Fatal(err)
	}
	waits := locktest.Commands{Only: "wait"}
	c.AddHook(&waits)
	name := "exec-sync"
	w := opsCall(name, "acquire", "c:1", "0", "")
	rep := send(ctx, c, w, time.Second)
	if rep.Err() != nil || rep.Replicas != 1 || rep.Acked != 1 || rep.SyncErr() != nil {
		t.Fatalf("synced write: err %v, %d of %d acked", rep.Err(), rep.Acked, rep.Replicas)
	}
	if got := replica.Client(t).HGet(ctx, name, "c:1").Val(); got != "1" {
		t.Fatalf("replica has hold count %q right after the synced write, want 1", got)
	}

	replica.Freeze()
	defer replica.Thaw()
	w = opsCall(name, "release", "c:1", "0", keys.Once(name, "r"))
	start := time.Now()
	rep = send(ctx, c, w, 200*time.Millisecond)
	waited := time.Since(start)
	if rep.Err() != nil || rep.Acked != 0 || !errors.Is(rep.SyncErr(), lockerr.ErrNotReplicated) {
		t.Fatalf("write with the replica frozen: err %v, %d of %d acked, SyncErr %v", rep.Err(), rep.Acked, rep.Replicas, rep.SyncErr())
	}
	if waited < 150*time.Millisecond {
		t.Fatalf("WAIT came back after %v, before its 200ms timeout although the replica is frozen", waited)
	}

	lone := redistest.SharedServer(t).Client(t)
	loneWaits := locktest.Commands{Only: "wait"}
	lone.AddHook(&loneWaits)
	w = opsCall("exec-sync-lone", "acquire", "d:1", "0", "")
	if rep := send(ctx, lone, w, time.Second); rep.Err() != nil || rep.Replicas != 0 || rep.SyncErr() != nil {
		t.Fatalf("synced write without replicas: err %v, %d replicas", rep.Err(), rep.Replicas)
	}
	if n := loneWaits.N(); n != 0 {
		t.Fatalf("%d WAIT commands sent to a master without replicas", n)
	}
	if n := waits.N(); n != 2 {
		t.Fatalf("%d WAIT commands sent to the master with a replica, want 2", n)
	}
}

// A request its caller gave up on resolves to its recorded reply if it
// applied; if it did not, it is cancelled: a late copy of it does nothing.
func TestResolve(t *testing.T) {
	c := redistest.SharedServer(t).Client(t)
	rt.KeepRecords(c) // a request sent twice stands for a resend
	ctx := context.Background()
	src, err := os.ReadFile("testdata/take_recorded.lua")
	if err != nil {
		t.Fatal(err)
	}
	acquire := scripts.Compose("take_recorded", string(src))
	name := locktest.Name(t, "exec-resolve") // fresh records on every run (-count)
	c.Set(ctx, name, 5, 0)
	applied := scripts.Request{Script: acquire, Keys: []string{name}, Args: []any{2}, Record: keys.Once(name, "applied")}
	if err := send(ctx, c, applied, 0).Err(); err != nil {
		t.Fatal(err)
	}
	rep, ok, err := rt.Of(c).Sender(nil, 0).Resolve(ctx, applied)
	if vs, _ := scripts.Ints(rep.Cmd); err != nil || !ok || len(vs) != 2 || vs[0] != 1 || vs[1] != 3 {
		t.Fatalf("Resolve of an applied request = %v, %v, %v; want its reply {1, 3}", vs, ok, err)
	}
	lost := scripts.Request{Script: acquire, Keys: []string{name}, Args: []any{2}, Record: keys.Once(name, "lost")}
	if _, ok, err := rt.Of(c).Sender(nil, 0).Resolve(ctx, lost); ok || err != nil {
		t.Fatalf("Resolve of a request never sent = %v, %v; want cancelled", ok, err)
	}
	if err := send(ctx, c, lost, 0).Err(); err != nil && !strings.Contains(err.Error(), "unexpected") {
		t.Fatalf("the late copy: %v", err)
	}
	if n, _ := c.Get(ctx, name).Int(); n != 3 {
		t.Fatalf("%d permits left; the cancelled request's late copy took some", n)
	}
}
