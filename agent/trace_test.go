package agent_test

import (
	"testing"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/executortest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// With a Tracer, each model request is a chat span (kind client) with the
// GenAI semantic conventions' attributes — the provider, the requested
// model, the response's id and stop reason, and the token usage the
// provider reported — under one invoke_agent span with the run's totals;
// the engine's execute_tool spans of the step are in the same trace,
// children of the invoke_agent span through the requests' trace context.
func TestLoopTracesEachModelTurnWithItsUsage(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var cnt executortest.Counts
	h := hostWith(t, &cnt, commands.Config{Tracer: tp})
	m := &scripted{turns: func(n int, _ model.Conversation) (model.Turn, error) {
		if n == 1 {
			return calls(1, "One call.", [2]string{"echo", `{"text":"hi"}`}), nil
		}
		return answer(2, "Done."), nil
	}}
	req := settings("say hi")
	req.Location = t.TempDir()
	res, err := agent.Start(ctxT(t), agent.Config{API: commands.Wire{Host: h}, Provider: m, Out: &quiet{}, Tracer: tp}, req)
	if err != nil || res.Cause != events.CauseCompleted {
		t.Fatalf("result %+v, %v", res, err)
	}
	var chats []sdktrace.ReadOnlySpan
	var invoke sdktrace.ReadOnlySpan
	var tools []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		switch attrs(sp)["gen_ai.operation.name"] {
		case "chat":
			chats = append(chats, sp)
		case "invoke_agent":
			invoke = sp
		case "execute_tool":
			tools = append(tools, sp)
		}
	}
	if invoke == nil || len(chats) != 2 || len(tools) != 1 {
		t.Fatalf("spans: invoke_agent %v, %d chat, %d execute_tool; want one, 2, 1", invoke != nil, len(chats), len(tools))
	}
	for i, sp := range chats {
		n := i + 1
		want := map[string]any{
			"gen_ai.provider.name": "scripted", "gen_ai.system": "scripted", "gen_ai.request.model": "m1",
			"gen_ai.response.id": []string{"resp_1", "resp_2"}[i], "gen_ai.response.finish_reasons": []string{[]string{"tool_calls", "stop"}[i]},
			"gen_ai.usage.input_tokens": int64(100 * n), "gen_ai.usage.output_tokens": []int64{7, 3}[i],
			"stepgate.run": res.Run, "stepgate.turn": int64(n),
		}
		got := attrs(sp)
		for k, v := range want {
			if !equal(got[k], v) {
				t.Errorf("chat span %d: %s = %v, want %v", n, k, got[k], v)
			}
		}
		if sp.Name() != "chat m1" || sp.SpanKind() != trace.SpanKindClient || sp.Parent().SpanID() != invoke.SpanContext().SpanID() {
			t.Errorf("chat span %d: %q, kind %v, parent %v; want chat m1, client, the invoke_agent span", n, sp.Name(), sp.SpanKind(), sp.Parent().SpanID())
		}
	}
	if got := attrs(invoke); got["gen_ai.usage.input_tokens"] != int64(300) || got["gen_ai.usage.output_tokens"] != int64(10) || got["gen_ai.agent.name"] != "build" {
		t.Errorf("invoke_agent span %v, want the run's totals 300 in, 10 out", got)
	}
	if tools[0].SpanContext().TraceID() != invoke.SpanContext().TraceID() {
		t.Error("the engine's execute_tool span is not in the agent's trace")
	}
}

// attrs are a span's attributes by key, as Go values.
func attrs(sp sdktrace.ReadOnlySpan) map[string]any {
	out := map[string]any{}
	for _, kv := range sp.Attributes() {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// equal compares attribute values (a string slice by its items).
func equal(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok && bok {
		return len(as) == len(bs) && (len(as) == 0 || as[0] == bs[0])
	}
	return a == b
}
