package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/lease"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// clusterClient returns a new client of the shared cluster with the scripts
// loaded, whose scheduler is closed when t ends.
func clusterClient(t *testing.T) (*redistest.Cluster, *redis.ClusterClient) {
	cl := redistest.SharedCluster(t)
	cc := cl.Client(t)
	if err := scripts.Preload(context.Background(), cc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSched(cc) })
	return cl, cc
}

// keysByMaster returns, for each master address, perMaster keys of t in
// distinct hash slots that the master owns.
func keysByMaster(t *testing.T, cc *redis.ClusterClient, perMaster int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	slots := map[int]bool{}
	for i := 0; i < 100000; i++ {
		k := keyName(t, i)
		if slots[keys.Slot(k)] {
			continue
		}
		node, err := cc.MasterForKey(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		addr := node.Options().Addr
		if len(out[addr]) < perMaster {
			slots[keys.Slot(k)] = true
			out[addr] = append(out[addr], k)
		}
		if len(out) == 3 && len(out[addr]) == perMaster {
			done := true
			for _, ks := range out {
				done = done && len(ks) == perMaster
			}
			if done {
				return out
			}
		}
	}
	t.Fatal("not enough keys found")
	return nil
}

// In a cluster the holds of a round are grouped per hash slot: no CROSSSLOT
// error, one script call per slot, holds sharing a slot batched together.
func TestScheduler_clusterGroupsBySlot(t *testing.T) {
	const d = 1500 * time.Millisecond
	_, cc := clusterClient(t)
	var calls scriptCalls
	cc.AddHook(&calls)
	s := schedFor(cc)
	var names []string
	for _, ks := range keysByMaster(t, cc, 4) {
		names = append(names, ks...) // 12 slots
	}
	for i := range 5 { // 5 more holds in one slot
		names = append(names, fmt.Sprintf("{lease-test:%s}:%d", t.Name(), i))
	}
	slots := map[int]bool{}
	for _, k := range names {
		slots[keys.Slot(k)] = true
	}
	var ls []*lost
	var hs []*lease.Hold
	for _, k := range names {
		h, l := lock(t, cc, k, d)
		ls, hs = append(ls, l), append(hs, h)
	}
	acquired := restart(t, cc, names, d)
	for _, h := range hs {
		s.Add(h, acquired)
		defer s.Remove(h)
	}
	// Rounds at d/3 and 2d/3; a round starts when the previous one is
	// over, so the first calls are those of the first 2 rounds (a loaded
	// machine may have started a third by the time they are counted).
	deadline := time.Now().Add(2*d + slack)
	for int(calls.calls.Load()) < 2*len(slots) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	counts, errs := calls.snapshot()
	if len(errs) != 0 {
		t.Fatalf("renewal errors (CROSSSLOT?): %v", errs)
	}
	if len(counts) < 2*len(slots) {
		t.Fatalf("%d script calls for %d holds in %d slots over 2 rounds, want %d", len(counts), len(names), len(slots), 2*len(slots))
	}
	counts = counts[:2*len(slots)]
	fives := 0
	for _, n := range counts {
		if n == 5 {
			fives++
		} else if n != 1 {
			t.Errorf("a call carried %d keys, want 1 (one hold in its slot) or 5", n)
		}
	}
	if fives != 2 {
		t.Errorf("keys per call %v: want the 5 holds of one slot in one call per round", counts)
	}
	for i, l := range ls {
		if errs := l.calls(); len(errs) != 0 {
			t.Fatalf("hold on %s lost: %v", names[i], errs)
		}
		if ttl := cc.PTTL(context.Background(), names[i]).Val(); ttl <= 0 {
			t.Fatalf("%s: PTTL = %v", names[i], ttl)
		}
	}
}

// A frozen master delays only the holds it serves: those on the other
// masters are renewed on time, while its own are declared lost when their
// validity ends.
func TestScheduler_clusterPausedMaster(t *testing.T) {
	const d = 600 * time.Millisecond
	const pause = 1500 * time.Millisecond // under cluster-node-timeout: no failover
	cl, cc := clusterClient(t)
	s := schedFor(cc)
	byMaster := keysByMaster(t, cc, 5) // 5 batches per master
	paused := cl.Nodes()[0]
	var frozen, live []*lost
	acquired := time.Now()
	for addr, ks := range byMaster {
		for _, k := range ks {
			h, l := lock(t, cc, k, d)
			s.Add(h, acquired)
			defer s.Remove(h)
			if addr == paused.Addr() {
				frozen = append(frozen, l)
			} else {
				live = append(live, l)
			}
		}
	}
	if len(frozen) != 5 || len(live) != 10 {
		t.Fatalf("%d holds on the paused master, %d elsewhere", len(frozen), len(live))
	}
	paused.Pause(pause)
	resumed := time.Now().Add(pause)
	for _, l := range frozen {
		at := l.wait(t, pause+slack)
		if late := at.Sub(acquired); late > d+d/3+slack {
			t.Errorf("a hold on the paused master declared lost %v after acquiring, want by the end of its %v validity", late, d)
		}
	}
	time.Sleep(time.Until(resumed) + d/3)
	for i, l := range live {
		if errs := l.calls(); len(errs) != 0 {
			t.Fatalf("hold %d on a running master lost while another master was paused: %v", i, errs)
		}
	}
	t.Logf("%d holds on the paused master lost, %d on the others renewed throughout", len(frozen), len(live))
}
