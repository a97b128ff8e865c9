package latchkeyotel

import (
	"context"
	"time"

	"github.com/latchkey/latchkey"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// SpanName is the name of the spans that WithSpans records.
const SpanName = "latchkey.wait"

// waitSpan records the span of a wait that ended now with outcome: the
// hooks are told only of its end, so it starts e.Wait before now. A wait
// that did not wait (acquired at its first attempt) has none.
func (r *recorder) waitSpan(e latchkey.Event, outcome string, failed bool) {
	if r.tracer == nil || (outcome == outcomeAcquired && !e.Waited) {
		return
	}
	end := time.Now()
	_, span := r.tracer.Start(context.Background(), SpanName,
		trace.WithTimestamp(end.Add(-e.Wait)),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			AttrKind.String(e.Kind),
			AttrName.String(e.Name),
			AttrOutcome.String(outcome),
			AttrWaited.Bool(e.Waited),
		))
	if failed && e.Err != nil {
		span.RecordError(e.Err, trace.WithTimestamp(end))
		span.SetStatus(codes.Error, e.Err.Error())
	}
	span.End(trace.WithTimestamp(end))
}
