package latchkeyotel

import (
	"context"
	"errors"

	"github.com/latchkey/latchkey"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the name of the meter that the instruments come from.
const ScopeName = "github.com/latchkey/latchkey/otel"

// The attributes of the measurements.
const (
	// AttrKind is the primitive's package, on every measurement.
	AttrKind = attribute.Key("latchkey.kind")
	// AttrName is the primitive's name, on every measurement WithNames.
	AttrName = attribute.Key("latchkey.name")
	// AttrWaited reports whether an acquisition had to wait: its first
	// attempt did not acquire. It is on latchkey.acquisitions, and on
	// latchkey.wait.duration with outcome "acquired".
	AttrWaited = attribute.Key("latchkey.waited")
	// AttrOutcome is how a wait recorded in latchkey.wait.duration ended:
	// "acquired" or "abandoned" (and, on spans, "not_replicated").
	AttrOutcome = attribute.Key("latchkey.outcome")
)

// The values of AttrOutcome.
const (
	outcomeAcquired      = "acquired"
	outcomeAbandoned     = "abandoned"
	outcomeNotReplicated = "not_replicated"
)

// waitBuckets are the bucket boundaries, in seconds, of
// latchkey.wait.duration: those that OpenTelemetry's semantic conventions
// advise for durations.
var waitBuckets = []float64{0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Instrument sets hooks that record metrics (see Hooks) on client, for the
// primitives of this process that use it. It replaces the hooks set on
// client before, LogHooks' included; to keep them, join them with
// latchkey.JoinHooks and set the result with latchkey.SetHooks.
func Instrument(client redis.UniversalClient, opts ...Option) error {
	h, err := Hooks(opts...)
	if err != nil {
		return err
	}
	latchkey.SetHooks(client, h)
	return nil
}

// Hooks returns hooks that record the metrics described in the package
// documentation, with instruments of the meter named ScopeName. It returns
// an error if an instrument cannot be made.
func Hooks(opts ...Option) (*latchkey.Hooks, error) {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.provider == nil {
		cfg.provider = otel.GetMeterProvider()
	}
	m := cfg.provider.Meter(ScopeName)
	var tracer trace.Tracer
	if cfg.spans {
		if cfg.tracers == nil {
			cfg.tracers = otel.GetTracerProvider()
		}
		tracer = cfg.tracers.Tracer(ScopeName)
	}

	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	wait, err := m.Float64Histogram("latchkey.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("How long calls that acquire, or wait for a latch, waited."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	errs = append(errs, err)
	active, err := m.Int64UpDownCounter("latchkey.hold.active", metric.WithUnit("{hold}"),
		metric.WithDescription("Holds acquired and neither released nor lost."))
	errs = append(errs, err)
	r := &recorder{
		names:         cfg.names,
		tracer:        tracer,
		wait:          wait,
		active:        active,
		acquisitions:  counter("latchkey.acquisitions", "{acquisition}", "Acquisitions, and latch waits that returned."),
		losses:        counter("latchkey.losses", "{hold}", "Holds lost: their lease ran out or they were found gone."),
		renewalFails:  counter("latchkey.renewal.failures", "{renewal}", "Renewals of holds that failed with an error."),
		notReplicated: counter("latchkey.not_replicated", "{acquisition}", "Acquisitions undone because too few replicas acknowledged them."),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &latchkey.Hooks{
		Acquired:      r.acquired,
		Released:      r.released,
		Lost:          r.lost,
		RenewalFailed: r.renewalFailed,
		Abandoned:     r.abandonedWait,
		NotReplicated: r.notReplicatedAcq,
	}, nil
}

// A recorder turns events into measurements.
type recorder struct {
	names         bool
	tracer        trace.Tracer // nil without WithSpans
	wait          metric.Float64Histogram
	active        metric.Int64UpDownCounter
	acquisitions  metric.Int64Counter
	losses        metric.Int64Counter
	renewalFails  metric.Int64Counter
	notReplicated metric.Int64Counter
}

// attrs returns e's kind and, WithNames, its name, followed by more.
func (r *recorder) attrs(e latchkey.Event, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, 2+len(more))
	kv = append(kv, AttrKind.String(e.Kind))
	if r.names {
		kv = append(kv, AttrName.String(e.Name))
	}
	return metric.WithAttributes(append(kv, more...)...)
}

// holds reports whether events of e's kind start and end holds: a latch's
// Wait that returns holds nothing.
func holds(e latchkey.Event) bool { return e.Kind != "countdownlatch" }

func (r *recorder) acquired(e latchkey.Event) {
	ctx := context.Background()
	waited := AttrWaited.Bool(e.Waited)
	r.wait.Record(ctx, e.Wait.Seconds(), r.attrs(e, AttrOutcome.String(outcomeAcquired), waited))
	r.acquisitions.Add(ctx, 1, r.attrs(e, waited))
	if holds(e) && !e.Reentered {
		r.active.Add(ctx, 1, r.attrs(e))
	}
	r.waitSpan(e, outcomeAcquired, false)
}

func (r *recorder) released(e latchkey.Event) {
	if holds(e) {
		r.active.Add(context.Background(), -1, r.attrs(e))
	}
}

func (r *recorder) lost(e latchkey.Event) {
	ctx := context.Background()
	r.losses.Add(ctx, 1, r.attrs(e))
	if holds(e) {
		r.active.Add(ctx, -1, r.attrs(e))
	}
}

func (r *recorder) renewalFailed(e latchkey.Event) {
	r.renewalFails.Add(context.Background(), 1, r.attrs(e))
}

func (r *recorder) abandonedWait(e latchkey.Event) {
	r.wait.Record(context.Background(), e.Wait.Seconds(), r.attrs(e, AttrOutcome.String(outcomeAbandoned)))
	r.waitSpan(e, outcomeAbandoned, true)
}

func (r *recorder) notReplicatedAcq(e latchkey.Event) {
	r.notReplicated.Add(context.Background(), 1, r.attrs(e))
	r.waitSpan(e, outcomeNotReplicated, true)
}
