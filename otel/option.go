package latchkeyotel

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// An Option configures Hooks and Instrument.
type Option func(*config)

type config struct {
	provider metric.MeterProvider
	names    bool
	spans    bool
	tracers  trace.TracerProvider
}

// WithMeterProvider makes the instruments come from p instead of the
// global MeterProvider, otel.GetMeterProvider().
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithNames adds the primitive's name, as the attribute latchkey.name, to
// every measurement. Each name then makes a time series of each
// instrument: use it only when the names are few and fixed. Spans carry
// the name with or without it.
func WithNames() Option {
	return func(c *config) { c.names = true }
}

// WithSpans records a span for each call that waited (see the package
// documentation), from the tracer named ScopeName of tp, or of the global
// TracerProvider, otel.GetTracerProvider(), if tp is nil. The default is
// no spans.
func WithSpans(tp trace.TracerProvider) Option {
	return func(c *config) { c.spans, c.tracers = true, tp }
}
