package latchkeyotel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// newSpans returns a span recorder and a provider that feeds it.
func newSpans(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return sr, tp
}

// spanAttr returns the value of the attribute k of s.
func spanAttr(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestSpans calls the hooks with made-up events: a span for each wait,
// none for an acquisition at the first attempt, none for what is not a
// wait, each as long as its wait and ending when the hook was called.
func TestSpans(t *testing.T) {
	sr, tp := newSpans(t)
	_, mp := newReader(t)
	h, err := Hooks(WithMeterProvider(mp), WithSpans(tp))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	h.Acquired(latchkey.Event{Kind: "mutex", Name: "orders"}) // no wait: no span
	h.Acquired(latchkey.Event{Kind: "mutex", Name: "orders", Wait: 250 * time.Millisecond, Waited: true})
	h.Abandoned(latchkey.Event{Kind: "semaphore", Name: "slots", Wait: 2 * time.Second, Err: context.DeadlineExceeded})
	h.Abandoned(latchkey.Event{Kind: "mutex", Name: "jobs", Wait: time.Second}) // TryLock's budget ran out
	h.NotReplicated(latchkey.Event{Kind: "fairlock", Name: "queue", Wait: 5 * time.Millisecond, Err: latchkey.ErrNotReplicated})
	h.Released(latchkey.Event{Kind: "mutex", Name: "orders"})
	h.Lost(latchkey.Event{Kind: "mutex", Name: "orders", Err: latchkey.ErrLost})
	h.RenewalFailed(latchkey.Event{Kind: "mutex", Name: "orders", Err: errors.New("i/o timeout")})
	after := time.Now()

	want := []struct {
		kind, name, outcome string
		wait                time.Duration
		status              codes.Code
	}{
		{"mutex", "orders", "acquired", 250 * time.Millisecond, codes.Unset},
		{"semaphore", "slots", "abandoned", 2 * time.Second, codes.Error},
		{"mutex", "jobs", "abandoned", time.Second, codes.Unset},
		{"fairlock", "queue", "not_replicated", 5 * time.Millisecond, codes.Error},
	}
	spans := sr.Ended()
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, w := range want {
		s := spans[i]
		if s.Name() != SpanName || s.Parent().IsValid() {
			t.Errorf("span %d: name %q, parent %v; want %q, a root span", i, s.Name(), s.Parent(), SpanName)
		}
		if got := [3]string{spanAttr(s, AttrKind).AsString(), spanAttr(s, AttrName).AsString(), spanAttr(s, AttrOutcome).AsString()}; got != [3]string{w.kind, w.name, w.outcome} {
			t.Errorf("span %d: kind, name, outcome %q, want %q", i, got, [3]string{w.kind, w.name, w.outcome})
		}
		if d := s.EndTime().Sub(s.StartTime()); d != w.wait {
			t.Errorf("span %d lasts %v, want the wait's %v", i, d, w.wait)
		}
		if s.EndTime().Before(before) || s.EndTime().After(after) {
			t.Errorf("span %d ends at %v, not when its hook was called", i, s.EndTime())
		}
		if s.Status().Code != w.status {
			t.Errorf("span %d: status %v, want %v", i, s.Status(), w.status)
		}
	}
}

// Spans are off by default, even with a global TracerProvider; with
// WithSpans(nil) they come from it. A real mutex's wait makes one.
func TestSpans_global(t *testing.T) {
	sr, tp := newSpans(t)
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	_, mp := newReader(t)
	ev := latchkey.Event{Kind: "mutex", Name: "orders", Wait: time.Millisecond, Waited: true}

	h, err := Hooks(WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	h.Acquired(ev)
	if n := len(sr.Ended()); n != 0 {
		t.Fatalf("%d spans without WithSpans, want none", n)
	}

	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(func() { latchkey.Close(c) })
	if err := Instrument(c, WithMeterProvider(mp), WithSpans(nil)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { latchkey.SetHooks(c, nil) })
	ctx := context.Background()
	holder := mutex.New(c, "orders")
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	const budget = 20 * time.Millisecond
	if ok, err := mutex.New(c, "orders").TryLock(ctx, budget); ok || err != nil {
		t.Fatalf("TryLock of a held lock = %v, %v", ok, err)
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans after one wait given up, want 1 (the Lock at the first attempt has none)", len(spans))
	}
	if d := spans[0].EndTime().Sub(spans[0].StartTime()); d < budget || spanAttr(spans[0], AttrOutcome).AsString() != "abandoned" {
		t.Errorf("the wait's span: %v, outcome %v; want at least %v, abandoned", d, spanAttr(spans[0], AttrOutcome), budget)
	}
	_ = holder.Unlock(ctx)
}
