package commands_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A ticket that expires is a wait too: the sweeper's host ends it, as a
// child of the asking call's span, and nothing runs.
func TestTraceExpiredTicketEndsItsWait(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	tp, exp := recorder(t)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", Tracer: tp,
		Clock: func() time.Time { return time.Unix(0, now.Load()) }})
	ctx, _ := agentSpan(t, "agent turn")
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "count_fx", Resource: "*", Effect: gate.Ask, TicketTTL: "1m"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"later"})}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("asking step: %+v, %v", out, err)
	}
	asked := one(t, exp, "execute_tool count_fx")
	now.Add(int64(2 * time.Minute))
	if err := h.SweepTickets(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	wait := one(t, exp, "stepgate.wait count_fx")
	childOf(t, wait, asked.SpanContext)
	wantAttrs(t, wait, map[string]string{"stepgate.reply": "expired", "stepgate.approved": "false", "stepgate.principal": ""})
	if n := len(named(exp, "execute_tool count_fx")); n != 1 || cnt.SideEffecting.Load() != 0 {
		t.Errorf("after the expiry: %d execute_tool spans, %d runs; want the asking span only, nothing run", n, cnt.SideEffecting.Load())
	}
}

// A caller's trace that is not sampled is not sampled here either (the
// SDK's default, parent-based sampler): no span is exported, and the
// ticket still records where the trace stands, for the host that resolves
// it to follow the same decision.
func TestTraceUnsampledCallerExportsNothing(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h, exp := tracedHost(t, s, registry(t, &cnt), "h1", false)
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithRemoteSpanContext(ctxT(t), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	run := tracedRun(t, ctx, h)
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"ask me"})}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported under an unsampled caller, want none", n)
	}
	if tp := out.Tickets[0].Trace; !strings.HasPrefix(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || !strings.HasSuffix(tp, "-00") {
		t.Errorf("ticket's trace %q, want the caller's trace, not sampled", tp)
	}
}

// BenchmarkSubmitStepTraced is BenchmarkSubmitStep's echo with tracing on
// (an SDK provider whose exporter drops the spans): the cost of the spans
// themselves. Tracing off is BenchmarkSubmitStep.
func BenchmarkSubmitStepTraced(b *testing.B) {
	s := steptest.Start(b, "")
	var cnt counter
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := startHostCfg(b, s, registry(b, &cnt), commands.Config{Host: "bench", Tracer: tp})
	ctx, _ := agentSpan(b, "agent")
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: "/"})
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200)})
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
			b.Fatal(err)
		}
	}
}
