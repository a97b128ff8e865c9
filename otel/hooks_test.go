package latchkeyotel

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// newReader returns a manual reader and a provider that it reads.
func newReader(t *testing.T) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return r, mp
}

// collect returns the metrics of ScopeName that r has.
func collect(t *testing.T, r *sdkmetric.ManualReader) []metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == ScopeName {
			return sm.Metrics
		}
	}
	return nil
}

// find returns the metric named name.
func find(t *testing.T, ms []metricdata.Metrics, name string) metricdata.Metrics {
	t.Helper()
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Metrics{}
}

// count returns the value of the int64 sum named name with exactly the
// attributes kv, and whether it has one.
func count(t *testing.T, ms []metricdata.Metrics, name string, kv ...attribute.KeyValue) (int64, bool) {
	t.Helper()
	want := attribute.NewSet(kv...)
	sum, ok := find(t, ms, name).Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T, not an int64 sum", name, find(t, ms, name).Data)
	}
	for _, dp := range sum.DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value, true
		}
	}
	return 0, false
}

// wantCount fails t unless the int64 sum named name with attributes kv is
// want.
func wantCount(t *testing.T, ms []metricdata.Metrics, want int64, name string, kv ...attribute.KeyValue) {
	t.Helper()
	if got, ok := count(t, ms, name, kv...); !ok || got != want {
		t.Errorf("%s%v = %d (present %v), want %d", name, kv, got, ok, want)
	}
}

// hist returns the histogram point of latchkey.wait.duration with exactly
// the attributes kv.
func hist(t *testing.T, ms []metricdata.Metrics, kv ...attribute.KeyValue) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	want := attribute.NewSet(kv...)
	m := find(t, ms, "latchkey.wait.duration")
	if m.Unit != "s" {
		t.Errorf("latchkey.wait.duration in %q, want s", m.Unit)
	}
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp
		}
	}
	t.Fatalf("latchkey.wait.duration has no point %v", kv)
	return metricdata.HistogramDataPoint[float64]{}
}

// noNames fails t if any point has the attribute latchkey.name.
func noNames(t *testing.T, ms []metricdata.Metrics) {
	t.Helper()
	for _, m := range ms {
		var sets []attribute.Set
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range d.DataPoints {
				sets = append(sets, dp.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, dp := range d.DataPoints {
				sets = append(sets, dp.Attributes)
			}
		}
		for _, s := range sets {
			if s.HasValue(AttrName) {
				t.Errorf("%s has a point with %s without WithNames: %v", m.Name, AttrName, s.ToSlice())
			}
		}
	}
}

var (
	mutexKind = AttrKind.String("mutex")
	latchKind = AttrKind.String("countdownlatch")
	acquired  = AttrOutcome.String("acquired")
	abandoned = AttrOutcome.String("abandoned")
	waited    = AttrWaited.Bool(true)
	direct    = AttrWaited.Bool(false)
)

// TestInstrument drives a real mutex on miniredis: two acquisitions, a
// wait given up, a release, a re-entered hold and a lost hold.
func TestInstrument(t *testing.T) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { latchkey.Close(c) })
	reader, mp := newReader(t)
	if err := Instrument(c, WithMeterProvider(mp)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { latchkey.SetHooks(c, nil) })
	ctx := context.Background()

	m := mutex.New(c, "orders")
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	ms := collect(t, reader)
	wantCount(t, ms, 1, "latchkey.hold.active", mutexKind)
	wantCount(t, ms, 1, "latchkey.acquisitions", mutexKind, direct)

	const budget = 30 * time.Millisecond
	if ok, err := mutex.New(c, "orders").TryLock(ctx, budget); ok || err != nil {
		t.Fatalf("TryLock of a held lock = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// A re-entry is an acquisition, not another hold.
	octx := latchkey.WithOwner(ctx)
	for range 2 {
		if err := m.Lock(octx); err != nil {
			t.Fatal(err)
		}
	}
	wantCount(t, collect(t, reader), 1, "latchkey.hold.active", mutexKind)
	for range 2 {
		if err := m.Unlock(octx); err != nil {
			t.Fatal(err)
		}
	}

	w := mutex.New(c, "jobs", mutex.WithWatchdogTimeout(100*time.Millisecond))
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mr.Del("jobs")
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a hold whose key was deleted not lost within 5s")
	}
	if !errors.Is(w.Err(), latchkey.ErrLost) {
		t.Fatalf("Err of a lost hold = %v", w.Err())
	}

	ms = collect(t, reader)
	noNames(t, ms)
	wantCount(t, ms, 4, "latchkey.acquisitions", mutexKind, direct)
	wantCount(t, ms, 0, "latchkey.hold.active", mutexKind)
	wantCount(t, ms, 1, "latchkey.losses", mutexKind)
	if _, ok := count(t, ms, "latchkey.acquisitions", mutexKind, waited); ok {
		t.Errorf("an acquisition that waited, where none did")
	}
	if dp := hist(t, ms, mutexKind, acquired, direct); dp.Count != 4 || dp.Sum < 0 || dp.Sum > 1 {
		t.Errorf("acquired waits: count %d, sum %vs; want 4 under 1s", dp.Count, dp.Sum)
	}
	if dp := hist(t, ms, mutexKind, abandoned); dp.Count != 1 || dp.Sum < budget.Seconds() || dp.Sum > 2 {
		t.Errorf("abandoned wait: count %d, sum %vs; want 1 of %v to 2s", dp.Count, dp.Sum, budget)
	}
	for _, m := range ms {
		if m.Name == "latchkey.renewal.failures" || m.Name == "latchkey.not_replicated" || m.Name == "latchkey.abandoned" {
			t.Errorf("%s recorded: %+v", m.Name, m.Data)
		}
	}
}

// TestHooks calls the hooks with made-up events, and checks the exact
// values recorded, names included.
func TestHooks(t *testing.T) {
	reader, mp := newReader(t)
	h, err := Hooks(WithMeterProvider(mp), WithNames())
	if err != nil {
		t.Fatal(err)
	}
	name := AttrName.String("orders")
	mu := latchkey.Event{Kind: "mutex", Name: "orders"}
	slow := mu
	slow.Wait, slow.Waited = 250*time.Millisecond, true
	h.Acquired(slow)
	h.Acquired(latchkey.Event{Kind: "mutex", Name: "orders", Wait: 500 * time.Millisecond, Waited: true})
	h.Acquired(mu)
	h.Released(mu)
	h.RenewalFailed(latchkey.Event{Kind: "mutex", Name: "orders", Err: errors.New("i/o timeout")})
	h.Lost(latchkey.Event{Kind: "mutex", Name: "orders", Err: latchkey.ErrLost})
	h.Abandoned(latchkey.Event{Kind: "mutex", Name: "orders", Wait: 2 * time.Second, Err: context.DeadlineExceeded})
	h.NotReplicated(latchkey.Event{Kind: "mutex", Name: "orders", Err: latchkey.ErrNotReplicated})
	latch := latchkey.Event{Kind: "countdownlatch", Name: "ready", Wait: time.Second, Waited: true}
	h.Acquired(latch)

	ms := collect(t, reader)
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	if want := []string{"latchkey.acquisitions", "latchkey.hold.active", "latchkey.losses", "latchkey.not_replicated",
		"latchkey.renewal.failures", "latchkey.wait.duration"}; !slices.Equal(names, want) {
		t.Errorf("instruments %q, want %q", names, want)
	}
	wantCount(t, ms, 2, "latchkey.acquisitions", mutexKind, name, waited)
	wantCount(t, ms, 1, "latchkey.acquisitions", mutexKind, name, direct)
	wantCount(t, ms, 1, "latchkey.hold.active", mutexKind, name)
	wantCount(t, ms, 1, "latchkey.renewal.failures", mutexKind, name)
	wantCount(t, ms, 1, "latchkey.losses", mutexKind, name)
	wantCount(t, ms, 1, "latchkey.not_replicated", mutexKind, name)

	// A latch's Wait is an acquisition, not a hold.
	latchName := AttrName.String("ready")
	wantCount(t, ms, 1, "latchkey.acquisitions", latchKind, latchName, waited)
	if v, ok := count(t, ms, "latchkey.hold.active", latchKind, latchName); ok {
		t.Errorf("latchkey.hold.active of a latch = %d, want no point", v)
	}

	for _, c := range []struct {
		kv    []attribute.KeyValue
		count uint64
		sum   float64
	}{
		{[]attribute.KeyValue{mutexKind, name, acquired, waited}, 2, 0.75},
		{[]attribute.KeyValue{mutexKind, name, acquired, direct}, 1, 0},
		{[]attribute.KeyValue{mutexKind, name, abandoned}, 1, 2},
		{[]attribute.KeyValue{latchKind, latchName, acquired, waited}, 1, 1},
	} {
		if dp := hist(t, ms, c.kv...); dp.Count != c.count || dp.Sum != c.sum {
			t.Errorf("wait %v: count %d, sum %v; want %d, %v", c.kv, dp.Count, dp.Sum, c.count, c.sum)
		}
	}
}

// TestHooks_global checks that the instruments come from the global
// MeterProvider by default.
func TestHooks_global(t *testing.T) {
	reader, mp := newReader(t)
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	t.Cleanup(func() { otel.SetMeterProvider(prev) })
	h, err := Hooks()
	if err != nil {
		t.Fatal(err)
	}
	h.Acquired(latchkey.Event{Kind: "rwlock", Name: "config"})
	ms := collect(t, reader)
	noNames(t, ms)
	wantCount(t, ms, 1, "latchkey.acquisitions", AttrKind.String("rwlock"), direct)
}
