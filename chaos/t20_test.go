package chaos

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/keys"
	"github.com/latchkey/latchkey/internal/notify"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/latchkey/latchkey/pubsub"
	"github.com/redis/go-redis/v9"
)

// TestT20ClusterMasterKill: on a 3-master + 3-replica cluster
// (cluster-node-timeout 2s), A holds a lock with the default watchdog, B
// waits for it, and the master of its slot is killed with SIGKILL; its
// replica takes over. Calls on that slot resume within 3s of the takeover;
// B's Hub, on a client that sends nothing else (so nothing but the Hub
// itself can lead it to the new master), listens again within 3s of the
// takeover; A keeps its hold (the key survived on the promoted replica)
// and unlocks; B, which must not have got the lock before, gets it within
// 2s of A's unlock, with a higher fencing token.
func TestT20ClusterMasterKill(t *testing.T) {
	rc := redistest.StartReplicatedCluster(t, 3)
	r := newReport(t)
	h := newHistory()
	hs := newHolders(r, h, 0)
	nm := "chaos:{t20}:held"
	a := mutex.New(clusterClient(t, rc), nm)
	if err := a.Lock(t.Context()); err != nil {
		t.Fatalf("A: Lock: %v", err)
	}
	r.Acquired(1)
	tokenA := a.Token()
	hs.Begin(nm, hold{client: 0, write: true, token: tokenA, done: a.Done()})
	hub := pubsub.New(clusterClient(t, rc))
	t.Cleanup(func() { _ = hub.Close() })
	// B sleeps on its Hub's own channel: a letter to a key of the test's
	// reaches this Subscription alone.
	wake := keys.LockOf(nm).Hubs + ":" + notify.Unwrap(hub).ID()
	heard, err := notify.Unwrap(hub).SubscribeWant(t.Context(), notify.Want{Name: wake, Policy: notify.WakeOne, Key: "t20-probe"})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer heard.Close()
	b := mutex.New(clusterClient(t, rc), nm, mutex.WithHub(hub))
	bDone := make(chan error, 1)
	var bAt atomic.Int64
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		err := b.Lock(ctx)
		bAt.Store(h.Now())
		if err == nil {
			hs.Begin(nm, hold{client: 1, write: true, token: b.Token(), done: b.Done()})
		}
		bDone <- err
	}()
	time.Sleep(200 * time.Millisecond)

	master, _, err := rc.MasterOf(t.Context(), nm)
	if err != nil {
		t.Fatal(err)
	}
	probe := mutex.New(clusterClient(t, rc), "chaos:{t20}:probe")
	killed := time.Now()
	master.Kill()
	r.Fault()
	if _, err := rc.WaitTakeover(t.Context(), nm, master); err != nil {
		t.Fatalf("no takeover: %v", err)
	}
	promoted := time.Now()
	t.Logf("the replica took over %v after the kill", promoted.Sub(killed).Round(time.Millisecond))
	resumed := waitResume(t.Context(), probe, promoted.Add(10*time.Second))
	switch {
	case resumed.IsZero():
		r.Violation("no lock call on the slot succeeded within 10s of the takeover")
	case resumed.Sub(promoted) > 3*time.Second:
		r.Violation("lock calls on the slot resumed %v after the takeover, want within 3s", resumed.Sub(promoted).Round(time.Millisecond))
	default:
		t.Logf("lock calls resumed %v after the takeover", resumed.Sub(promoted).Round(time.Millisecond))
	}
	if back := hearAgain(t.Context(), clusterClient(t, rc), wake, heard, promoted.Add(3*time.Second)); back.IsZero() {
		r.Violation("B's Hub heard nothing on its channel within 3s of the takeover")
	} else {
		t.Logf("B's Hub heard its channel again %v after the takeover", back.Sub(promoted).Round(time.Millisecond))
	}
	time.Sleep(time.Second)
	select {
	case err := <-bDone:
		r.Violation("B's Lock returned %v while A held the lock (A told of its loss: %v)", err, isClosed(a.Done()))
		return
	default:
	}
	if isClosed(a.Done()) {
		r.Violation("A lost its hold when the master died, although the key lives on the promoted replica: %v", a.Err())
	}
	hs.End(nm, 0)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	unlocked := h.Now()
	if err := a.Unlock(ctx); err != nil {
		r.Violation("A: Unlock after the takeover: %v", err)
	}
	select {
	case err := <-bDone:
		after := time.Duration(bAt.Load() - unlocked)
		switch {
		case err != nil:
			r.Violation("B's Lock failed after the takeover: %v", err)
		case after > 2*time.Second:
			r.Violation("B got the lock %v after A's unlock, want within 2s", after.Round(time.Millisecond))
		case b.Token() <= tokenA:
			r.Violation("B's token %d is not above A's %d across the takeover", b.Token(), tokenA)
		default:
			t.Logf("B got the lock %v after A's unlock", after.Round(time.Millisecond))
			r.Acquired(1)
			_ = b.Unlock(ctx)
		}
	case <-time.After(5 * time.Second):
		r.Violation("B did not get the lock within 5s of A's unlock")
	}
}

// waitResume tries to take and release l until it succeeds or deadline
// passes, and returns when it succeeded (zero if never).
func waitResume(ctx context.Context, l *mutex.Mutex, deadline time.Time) time.Time {
	for time.Now().Before(deadline) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		ok, err := l.TryLock(cctx, 0)
		if ok {
			_ = l.Unlock(cctx)
		}
		cancel()
		if ok && err == nil {
			return time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// hearAgain publishes a letter to heard's key on channel through client
// until heard is woken (by the letter, or by the wake-up that follows a
// resubscription), or deadline passes, and returns when it was woken (zero
// if never).
func hearAgain(ctx context.Context, client redis.UniversalClient, channel string, heard *notify.Subscription, deadline time.Time) time.Time {
	cmd := "SPUBLISH"
	if err := client.Do(ctx, "PUBSUB", "SHARDNUMSUB").Err(); err != nil {
		cmd = "PUBLISH"
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		_ = client.Do(ctx, cmd, channel, "@t20-probe probe").Err()
		select {
		case <-heard.C():
			return time.Now()
		case <-tick.C:
		}
	}
	return time.Time{}
}
