package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latchkey/latchkey/internal/redistest"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
)

// fillValue is the value of the keys that fill a server's memory.
var fillValue = strings.Repeat("x", 16<<10)

// fillSeq numbers the keys that fill a server.
var fillSeq atomic.Int64

// fill writes keys with ttl (0: none) until a write fails (returned) or
// the server has evicted a key, at most 2000 keys.
func fill(ctx context.Context, admin *redis.Client, ttl time.Duration) error {
	for i := range 2000 {
		if err := admin.Set(ctx, fmt.Sprintf("chaos:fill:%d", fillSeq.Add(1)), fillValue, ttl).Err(); err != nil {
			return err
		}
		if i%50 == 49 && evicted(ctx, admin) > 0 {
			return nil
		}
	}
	return nil
}

// evicted returns the server's evicted_keys.
func evicted(ctx context.Context, admin *redis.Client) int64 {
	info, err := admin.Info(ctx, "stats").Result()
	if err != nil {
		return -1
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "evicted_keys:"); ok {
			fmt.Sscan(v, &n)
		}
	}
	return n
}

// TestT29EvictionVolatileTTL says what happens to a held lock on a server
// with maxmemory 4mb and maxmemory-policy volatile-ttl (an evicting policy;
// the lock key's TTL makes it the first to go when other keys live
// longer): whether latchkey refuses the server (it could read the policy),
// and, once the memory fills up with longer-lived keys, that the evicted
// hold is signalled lost within the renewal period, never kept silently.
func TestT29EvictionVolatileTTL(t *testing.T) {
	const lease = 3 * time.Second
	// Sampling every key, Redis evicts exactly the key with the shortest TTL.
	s := redistest.StartServer(t, "--maxmemory", "4mb", "--maxmemory-policy", "volatile-ttl", "--maxmemory-samples", "64")
	r := newReport(t)
	admin := adminClient(t, s.Addr())
	nm := name(t, 0)
	a := mutex.New(newClient(t, s.Addr()), nm, mutex.WithWatchdogTimeout(lease))
	if err := a.Lock(t.Context()); err != nil {
		t.Logf("latchkey refused the lock on a volatile-ttl server: %v", err)
		return
	}
	r.Acquired(1)
	t.Logf("latchkey took a lock on a server whose maxmemory-policy is volatile-ttl, without a word")
	if err := fill(t.Context(), admin, time.Hour); err != nil {
		t.Fatalf("fill: %v", err)
	}
	r.Fault()
	gone := time.Now()
	for admin.Exists(t.Context(), nm).Val() == 1 && time.Since(gone) < 5*time.Second {
		if err := fill(t.Context(), admin, time.Hour); err != nil {
			t.Fatalf("fill: %v", err)
		}
	}
	if admin.Exists(t.Context(), nm).Val() == 1 {
		t.Logf("the lock key survived %d evictions", evicted(t.Context(), admin))
		return
	}
	t.Logf("the lock key was evicted (%d keys evicted in all)", evicted(t.Context(), admin))
	select {
	case <-a.Done():
		r.Lost()
		t.Logf("A was told of the eviction after %v: %v", time.Since(gone).Round(time.Millisecond), a.Err())
	case <-time.After(lease/3 + time.Second):
		r.Violation("the lock key was evicted and A was not told within a renewal period and a second")
	}
}

// TestT29EvictionNoEviction: with maxmemory-policy noeviction and the
// memory full, a new acquisition must fail (OOM), never succeed, and a
// hold taken before must be either renewed or signalled lost: never
// expired silently.
func TestT29EvictionNoEviction(t *testing.T) {
	const lease = 3 * time.Second
	s := redistest.StartServer(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	r := newReport(t)
	admin := adminClient(t, s.Addr())
	a := mutex.New(newClient(t, s.Addr()), name(t, 0), mutex.WithWatchdogTimeout(lease))
	if err := a.Lock(t.Context()); err != nil {
		t.Fatalf("A: Lock before the fill: %v", err)
	}
	r.Acquired(1)
	err := fill(t.Context(), admin, 0)
	if err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("fill ended with %v, want an OOM error", err)
	}
	r.Fault()
	b := mutex.New(newClient(t, s.Addr()), name(t, 1), mutex.WithWatchdogTimeout(lease))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	switch err := b.Lock(ctx); {
	case err == nil:
		r.Violation("B took a lock on a server out of memory")
	default:
		t.Logf("B's Lock on a full server failed closed: %v", err)
	}
	time.Sleep(lease + time.Second)
	held := admin.Exists(t.Context(), name(t, 0)).Val() == 1
	switch lost := isClosed(a.Done()); {
	case !held && !lost:
		r.Violation("A's hold expired on a full server and A was not told")
	case lost:
		r.Lost()
		t.Logf("A's hold on the full server: lost and signalled (%v)", a.Err())
	default:
		t.Logf("A's hold on the full server: still renewed")
	}
}
