package client_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/client"
	"go.opentelemetry.io/otel/trace"
)

func spanContext(t *testing.T) trace.SpanContext {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
}

func TestTraceHeadersCarryTheCallersSpan(t *testing.T) {
	sc := spanContext(t)
	h := client.InjectTrace(trace.ContextWithSpanContext(context.Background(), sc))
	if got, want := h.Get(client.TraceparentHeader), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; got != want {
		t.Fatalf("traceparent header %q, want %q", got, want)
	}
	got := trace.SpanContextFromContext(client.ExtractTrace(context.Background(), h))
	if !got.IsRemote() || got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || !got.IsSampled() {
		t.Errorf("extracted %v, want the remote span %v", got, sc)
	}
	if client.InjectTrace(context.Background()) != nil {
		t.Errorf("headers without a span: want none")
	}
	if ctx := client.ExtractTrace(context.Background(), nats.Header{"other": {"x"}}); trace.SpanContextFromContext(ctx).IsValid() {
		t.Errorf("a request without traceparent gave a span context")
	}
	if got := client.ParseTraceparent(client.Traceparent(sc)); got.SpanID() != sc.SpanID() || got.TraceID() != sc.TraceID() {
		t.Errorf("traceparent round trip: %v, want %v", got, sc)
	}
	for _, bad := range []string{"", "00-zz-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		if client.ParseTraceparent(bad).IsValid() {
			t.Errorf("ParseTraceparent(%q) is valid, want not", bad)
		}
	}
}

// FuzzParseTraceparent: any text parses to a span context or none, never
// panics, and a valid one prints back to the same traceparent.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")
	f.Add("")
	f.Fuzz(func(t *testing.T, tp string) {
		sc := client.ParseTraceparent(tp)
		if !sc.IsValid() {
			return
		}
		if again := client.ParseTraceparent(client.Traceparent(sc)); !again.Equal(sc) {
			t.Fatalf("%q: parsed %v, printed %q, parsed again %v", tp, sc, client.Traceparent(sc), again)
		}
	})
}
