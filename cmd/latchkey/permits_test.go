package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latchkey/latchkey/permitsemaphore"
	"github.com/latchkey/latchkey/semaphore"
	"github.com/redis/go-redis/v9"
)

// testPermitTotals stages a permit semaphore of 3 permits: one held, one
// whose holder died and whose lease ran out (not reclaimed: no call came
// since), one available. inspect shows each, and the total; a plain
// semaphore's total is said to be unknown.
func testPermitTotals(t *testing.T, c cli, rdb redis.UniversalClient) {
	ctx := t.Context()
	name := testName(t, "totals")
	ps := permitsemaphore.New(rdb, name)
	if _, err := ps.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	p, err := ps.Acquire(ctx, permitsemaphore.Lease(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Release(context.Background()) }()
	// A permit acquired as Redisson acquires one, its lease over 10s ago.
	l := namesOf(name).sem
	expired := "0123456789abcdef"
	rdb.DecrBy(ctx, name, 1)
	rdb.ZAdd(ctx, l.Leases, redis.Z{Score: float64(time.Now().Add(-10 * time.Second).UnixMilli()), Member: expired})
	defer rdb.ZRem(context.Background(), l.Leases, expired)

	st := c.inspect(t, name)
	switch {
	case st.Kind != kindPermits:
		t.Fatalf("kind %s, want %s", st.Kind, kindPermits)
	case st.Permits == nil || *st.Permits != 1, st.PermitsAcquired == nil || *st.PermitsAcquired != 1,
		st.PermitsExpired == nil || *st.PermitsExpired != 1, st.PermitsTotal == nil || *st.PermitsTotal != 3:
		t.Errorf("permits %v, acquired %v, expired %v, total %v; want 1, 1, 1, 3",
			ptr(st.Permits), ptr(st.PermitsAcquired), ptr(st.PermitsExpired), ptr(st.PermitsTotal))
	case len(st.Leases) != 1 || st.Leases[0].ID != p.ID() || len(st.Expired) != 1 || st.Expired[0].ID != "30313233343536373839616263646566":
		t.Errorf("permit_ids %+v, expired_permit_ids %+v", st.Leases, st.Expired)
	}
	table, _, _ := c.run(t, "inspect", name)
	for _, want := range []string{"1 available, 1 acquired, 1 expired (not reclaimed yet), 3 total", "expired 1"} {
		if !strings.Contains(table, want) { // 10s ago, 11s on a slow machine
			t.Errorf("inspect's table lacks %q:\n%s", want, table)
		}
	}

	sem := testName(t, "plain")
	if _, err := semaphore.New(rdb, sem).TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	st = c.inspect(t, sem, "-kind", "semaphore")
	if st.Permits == nil || *st.Permits != 2 || st.PermitsTotal != nil || st.PermitsAcquired != nil {
		t.Errorf("plain semaphore: permits %v, total %v, acquired %v; want 2 and unknowns (null)", ptr(st.Permits), ptr(st.PermitsTotal), ptr(st.PermitsAcquired))
	}
	if table, _, _ := c.run(t, "inspect", "-kind", "semaphore", sem); !strings.Contains(table, "total unknown") {
		t.Errorf("inspect's table of a plain semaphore does not say its total is unknown:\n%s", table)
	}
}

// ptr shows a nullable number.
func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
