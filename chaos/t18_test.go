package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// A failover is a master and a replica whose replication goes through a
// proxy (so that it can be cut), and clients A and B whose proxies point at
// the master until Failover promotes the replica and points them at it, as
// a virtual IP moved by an operator would.
type failover struct {
	t               *testing.T
	master, replica *redistest.Server
	repl            *Proxy
	pa, pb          *Proxy
	a, b            *redis.Client
}

func newFailover(t *testing.T) *failover {
	n := newNet(t)
	f := &failover{t: t, master: redistest.StartServer(t)}
	f.repl = n.Proxy(t, f.master.Addr())
	f.replica = redistest.StartReplicaVia(t, f.master, f.repl.Addr())
	f.pa, f.pb = n.Proxy(t, f.master.Addr()), n.Proxy(t, f.master.Addr())
	f.a, f.b = newClient(t, f.pa.Addr()), newClient(t, f.pb.Addr())
	return f
}

// CutReplication blackholes the replication link both ways.
func (f *failover) CutReplication() {
	f.repl.Blackhole("upstream")
	f.repl.Blackhole("downstream")
}

// Failover kills the master with SIGKILL, promotes the replica with
// REPLICAOF NO ONE, and points A's and B's proxies at it.
func (f *failover) Failover() {
	f.master.Kill()
	promote := adminClient(f.t, f.replica.Addr())
	if err := promote.Do(f.t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		f.t.Fatalf("REPLICAOF NO ONE: %v", err)
	}
	for _, p := range []*Proxy{f.pa, f.pb} {
		if err := p.Retarget(f.replica.Addr()); err != nil {
			f.t.Fatalf("retarget proxy: %v", err)
		}
	}
}

// TestT18FailoverWithoutReplicaSync documents the unsafe path: with
// WithReplicaSync(0) and replication cut, A's acquisition is acknowledged
// by the master alone; after the master dies and its replica is promoted,
// B gets the same lock while A still holds it. The test asserts that this
// happens (it is what the docs say), and counts it as no violation.
func TestT18FailoverWithoutReplicaSync(t *testing.T) {
	f := newFailover(t)
	r := newReport(t)
	nm := name(t, 0)
	a := mutex.New(f.a, nm, mutex.WithWatchdogTimeout(3*time.Second), mutex.WithReplicaSync(0))
	b := mutex.New(f.b, nm, mutex.WithWatchdogTimeout(3*time.Second), mutex.WithReplicaSync(0))
	f.CutReplication()
	if err := a.Lock(t.Context()); err != nil {
		t.Fatalf("A: Lock without replica sync: %v", err)
	}
	r.Acquired(1)
	f.Failover()
	r.Fault()
	ok, err := b.TryLock(t.Context(), 2*time.Second)
	if err != nil || !ok {
		t.Errorf("B: TryLock after the failover = %v, %v; the docs say B gets the lock that A held unreplicated", ok, err)
		return
	}
	r.Acquired(1)
	t.Logf("as documented: B got the lock (token %d) while A (token %d) held it; A told of its loss: %v", b.Token(), a.Token(), isClosed(a.Done()))
}

// TestT18FailoverWithReplicaSync: with WithReplicaSync, an acquisition that
// no replica acknowledges fails with ErrNotReplicated within the timeout
// (plus a second) and leaves nothing on the master; one that the replica
// acknowledged survives the master's death: after the failover B cannot
// get the lock, A keeps its hold and can unlock it, and then B gets it with
// a higher fencing token.
func TestT18FailoverWithReplicaSync(t *testing.T) {
	// Below the clients' read timeout, so that the WAIT answers first.
	const sync = 250 * time.Millisecond
	t.Run("unreplicated", func(t *testing.T) {
		f := newFailover(t)
		r := newReport(t)
		admin := adminClient(t, f.master.Addr())
		f.CutReplication()
		for i, c := range unreplicatedCases {
			nm := name(t, i)
			if c.setup != nil {
				if err := c.setup(t.Context(), admin, nm); err != nil {
					t.Fatalf("%s: setup: %v", c.name, err)
				}
			}
			r.Fault()
			start := time.Now()
			err := c.acquire(t.Context(), f.a, nm, sync)
			took := time.Since(start)
			left := c.left(t.Context(), admin, nm)
			switch {
			case !errors.Is(err, latchkey.ErrNotReplicated):
				r.Violation("%s: acquisition with replication cut returned %v, want ErrNotReplicated", c.name, err)
			case took > sync+time.Second:
				r.Violation("%s: acquisition took %v to fail, replica-sync timeout %v", c.name, took, sync)
			case left != "":
				r.Violation("%s: the failed acquisition left something on the master: %s", c.name, left)
			}
		}
	})
	t.Run("failover", func(t *testing.T) {
		f := newFailover(t)
		r := newReport(t)
		h := newHistory()
		hs := newHolders(r, h, 0)
		nm := name(t, 0)
		a := mutex.New(f.a, nm, mutex.WithWatchdogTimeout(3*time.Second), mutex.WithReplicaSync(sync))
		b := mutex.New(f.b, nm, mutex.WithWatchdogTimeout(3*time.Second), mutex.WithReplicaSync(sync))
		if err := a.Lock(t.Context()); err != nil {
			t.Fatalf("A: Lock with a live replica: %v", err)
		}
		r.Acquired(1)
		hs.Begin(nm, hold{client: 0, write: true, token: a.Token(), done: a.Done()})
		tokenA := a.Token()
		f.Failover()
		r.Fault()
		if ok, err := b.TryLock(t.Context(), 2*time.Second); ok {
			r.Acquired(1)
			hs.Begin(nm, hold{client: 1, write: true, token: b.Token(), done: b.Done()})
			r.Violation("B got the lock that A acquired with replica sync, after the failover (A told of its loss: %v)", isClosed(a.Done()))
			return
		} else if err != nil {
			t.Logf("B: TryLock after the failover: %v", err)
		}
		time.Sleep(2 * time.Second) // two renewals against the new master
		if isClosed(a.Done()) {
			r.Violation("A lost its replicated hold across the failover: %v", a.Err())
		}
		hs.End(nm, 0)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if err := a.Unlock(ctx); err != nil {
			r.Violation("A: Unlock after the failover: %v", err)
		}
		ok, err := b.TryLock(ctx, 2*time.Second)
		switch {
		case err != nil || !ok:
			r.Violation("B: TryLock after A's unlock = %v, %v", ok, err)
		case b.Token() <= tokenA:
			r.Violation("B's token %d is not above A's %d across the failover", b.Token(), tokenA)
		default:
			r.Acquired(1)
		}
	})
}
