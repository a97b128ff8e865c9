package latchkeyotel_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/latchkey/latchkey"
	"github.com/latchkey/latchkey/mutex"
	latchkeyotel "github.com/latchkey/latchkey/otel"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// printSums prints the counters and up-down counters that reader has
// collected, with their values for kind "mutex".
func printSums(reader sdkmetric.Reader) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				var n int64
				for _, dp := range sum.DataPoints {
					if kind, _ := dp.Attributes.Value(latchkeyotel.AttrKind); kind.AsString() == "mutex" {
						n += dp.Value
					}
				}
				fmt.Println(m.Name, n)
			}
		}
	}
}

// Instrument makes the primitives of one client record metrics. A program
// would pass its own MeterProvider, with an exporter, or none to use the
// global one; the manual reader here stands in for an exporter.
func ExampleInstrument() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	if err := latchkeyotel.Instrument(rdb, latchkeyotel.WithMeterProvider(provider)); err != nil {
		panic(err)
	}
	ctx := context.Background()
	m := mutex.New(rdb, "inventory:sku-42")
	if err := m.Lock(ctx); err != nil {
		panic(err)
	}
	if err := m.Unlock(ctx); err != nil {
		panic(err)
	}
	printSums(reader)
	// Output:
	// latchkey.hold.active 0
	// latchkey.acquisitions 1
}

// Hooks can be joined with others, here with those that log, and set on a
// client with latchkey.SetHooks; WithSpans adds spans of the waits.
func ExampleHooks() {
	// An in-process Redis for the example; a program dials its server's address.
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	defer latchkey.Close(rdb) // the shared pub/sub connection and the watchdog

	// Metrics from the global MeterProvider, and spans of waits from the
	// global TracerProvider.
	h, err := latchkeyotel.Hooks(latchkeyotel.WithSpans(nil))
	if err != nil {
		panic(err)
	}
	latchkey.SetHooks(rdb, latchkey.JoinHooks(h, latchkey.LogHooks(slog.Default())))
}
