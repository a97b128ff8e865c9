// Package latchkeyotel records OpenTelemetry metrics of latchkey's
// synchronizers through the hooks of package latchkey (see
// latchkey.Hooks). It is a module of its own, so that programs that do not
// use OpenTelemetry do not depend on it.
//
// Hooks are kept per go-redis client: Instrument sets them on one client,
// and the primitives of every other client record nothing.
//
//	if err := latchkeyotel.Instrument(rdb); err != nil {
//		return err
//	}
//
// Instrument replaces the hooks set on the client before. To log as well,
// join the hooks yourself:
//
//	h, err := latchkeyotel.Hooks()
//	if err != nil {
//		return err
//	}
//	latchkey.SetHooks(rdb, latchkey.JoinHooks(h, latchkey.LogHooks(slog.Default())))
//
// # Metrics
//
// The instruments come from the meter "github.com/latchkey/latchkey/otel"
// of the global MeterProvider, or of the one given WithMeterProvider:
//
//	latchkey.wait.duration    histogram, s     how long Lock, Acquire and Wait calls waited, with
//	                                           latchkey.outcome "acquired" and latchkey.waited, or
//	                                           latchkey.outcome "abandoned" (the context ended or
//	                                           the wait budget ran out)
//	latchkey.acquisitions     counter          acquisitions (and latch waits that returned), with
//	                                           latchkey.waited
//	latchkey.hold.active      up-down counter  holds now live: locks, read and write locks and
//	                                           permits acquired and neither released nor lost
//	latchkey.losses           counter          holds lost: their lease ran out or they were found gone
//	latchkey.renewal.failures counter          renewals that failed with an error (they are retried)
//	latchkey.not_replicated   counter          acquisitions undone because too few replicas
//	                                           acknowledged them
//
// Waits given up are the points of latchkey.wait.duration with outcome
// "abandoned": their count is the number of such waits.
//
// Every measurement has the attribute latchkey.kind, the primitive's
// package ("mutex", "fairlock", "rwlock", "semaphore", "permitsemaphore",
// "countdownlatch" or "redlock"). The primitive's name, latchkey.name, is
// added only WithNames, since names are often unbounded (one per order, per
// user...) and each name makes a time series of each instrument.
//
// latchkey.hold.active adds one for each acquisition and takes one away for
// each release and each lost hold. A latch's Wait that returns counts as an
// acquisition and its wait is recorded, but it holds nothing:
// latchkey.hold.active leaves kind "countdownlatch" out. An owner's
// re-entry of a hold it has (see latchkey.WithOwner) counts as an
// acquisition but not as another hold: the hold ends once, with its last
// Unlock.
//
// # Spans
//
// WithSpans adds a span named latchkey.wait for each call that had to wait:
// one that acquired after its first attempt failed (outcome "acquired"),
// gave up (outcome "abandoned", with an error status when its context
// ended), or acquired and was undone for want of replicas (outcome
// "not_replicated", error status). A call that acquired at its first
// attempt has no span. Each span has the attributes latchkey.kind,
// latchkey.name, latchkey.outcome and latchkey.waited.
//
// The hooks are told of a wait when it ends, with how long it took, and
// not of the caller's context: a span starts that long before its end, and
// it is a root span, not a child of the caller's span.
package latchkeyotel
