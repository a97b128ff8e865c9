package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/rt"
	"github.com/latchkey/latchkey/internal/scripts"
)

// An owner's first try writes its record and reads what the lane held in
// one command, after it took the lock: a copy of the request that ran
// before, or that its caller gave up on, puts the lane and the lock back
// as they were when it finds the lock free, and leaves the answer to the
// full acquisition.
func TestMutex_ownerTakeResentPutsBack(t *testing.T) {
	c := client(t, server(t))
	ctx := context.Background()
	send := func(req scripts.Request) []int64 {
		t.Helper()
		vs, err := scripts.Ints(rt.Of(c).Sender(nil, 0).Send(ctx, req).Cmd)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	name := lockName(t)
	l := keys.LockOf(name)
	take := scripts.MutexTakeOwner{Lock: l, Owner: "o:1", Lease: 10 * time.Second, Record: keys.Once(name, "req-1")}
	first := send(take.Request())
	if len(first) != 3 || first[0] != 1 {
		t.Fatalf("first send %v, want {1, token, 1}", first)
	}
	// The hold ends (its lease ran out), then a copy of the take arrives.
	if err := c.Del(ctx, name).Err(); err != nil {
		t.Fatal(err)
	}
	if again := send(take.Request()); len(again) != 1 || again[0] != scripts.TakeOwnerNot {
		t.Fatalf("a copy after the hold ended = %v, want {%d}", again, scripts.TakeOwnerNot)
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("a copy of a take that ran before left the lock taken")
	}
	acq := scripts.MutexAcquire{Lock: l, Owner: "o:1", Entry: "h/k", Lease: 10 * time.Second, Reentry: scripts.Reentrant, Record: take.Record}
	if vs := send(acq.Request()); len(vs) != 3 || vs[1] != first[1] {
		t.Fatalf("the full acquisition under the same record = %v, want the first answer %v replayed", vs, first)
	}

	// A take its caller gave up on before it ran does nothing when it
	// arrives.
	given := scripts.MutexTakeOwner{Lock: l, Owner: "o:2", Lease: 10 * time.Second, Record: keys.Once(name, "req-2")}.Request()
	if _, applied, err := rt.Of(c).Sender(nil, 0).Resolve(ctx, given); err != nil || applied {
		t.Fatalf("resolving a take never sent = applied %v, %v; want not applied", applied, err)
	}
	if vs := send(given); len(vs) != 1 || vs[0] != scripts.TakeOwnerNot {
		t.Fatalf("a take given up on = %v, want {%d}", vs, scripts.TakeOwnerNot)
	}
	if n := c.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("a take given up on took the lock")
	}
}
