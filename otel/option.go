package latchkeyotel

import "go.opentelemetry.io/otel/metric"

// An Option configures Hooks and Instrument.
type Option func(*config)

type config struct {
	provider metric.MeterProvider
	names    bool
}

// WithMeterProvider makes the instruments come from p instead of the
// global MeterProvider, otel.GetMeterProvider().
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithNames adds the primitive's name, as the attribute latchkey.name, to
// every measurement. Each name then makes a time series of each
// instrument: use it only when the names are few and fixed.
func WithNames() Option {
	return func(c *config) { c.names = true }
}
