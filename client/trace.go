package client

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// W3C trace-context header names, as sent on a request to the service.
const (
	TraceparentHeader = "traceparent"
	TracestateHeader  = "tracestate"
)

// headerCarrier reads and writes trace-context headers of a NATS message
// under their exact (lower-case) names.
type headerCarrier nats.Header

func (h headerCarrier) Get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (h headerCarrier) Set(key, value string) { h[key] = []string{value} }

func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// InjectTrace returns the headers that carry ctx's span context to the
// service (traceparent, and tracestate when set); nil when ctx holds no
// valid span context, so a request without a trace costs nothing more.
func InjectTrace(ctx context.Context) nats.Header {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	h := nats.Header{}
	propagation.TraceContext{}.Inject(ctx, headerCarrier(h))
	return h
}

// ExtractTrace returns ctx with the remote span context the headers carry
// (the caller's span, the parent of what the engine does for the request);
// ctx unchanged when they carry none, or a traceparent that does not parse.
func ExtractTrace(ctx context.Context, h nats.Header) context.Context {
	if len(h[TraceparentHeader]) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, headerCarrier(h))
}

// Traceparent is the W3C traceparent of sc ("" when sc is not valid): what
// a ticket records of the call that waits on it.
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	h := nats.Header{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), headerCarrier(h))
	return headerCarrier(h).Get(TraceparentHeader)
}

// ParseTraceparent is the span context of a W3C traceparent, marked
// remote; not valid when tp does not parse.
func ParseTraceparent(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), headerCarrier(nats.Header{TraceparentHeader: {tp}}))
	return trace.SpanContextFromContext(ctx)
}
