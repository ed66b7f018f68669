package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// spanNamed is the one ended span called name.
func spanNamed(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var got []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d spans %q, want 1 (of %d)", len(got), name, len(exp.GetSpans()))
	}
	return got[0]
}

func parentIs(t *testing.T, s tracetest.SpanStub, parent trace.SpanContext) {
	t.Helper()
	if s.SpanContext.TraceID() != parent.TraceID() || s.Parent.SpanID() != parent.SpanID() || !s.Parent.IsRemote() {
		t.Errorf("span %s: trace %s, parent %s (remote %v); want a child of the client's span %s in trace %s",
			s.Name, s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote(), parent.SpanID(), parent.TraceID())
	}
}

// A span a client starts before submit_step is, through the Go client's
// traceparent header and the service, the parent of the call's span on
// the serving host; an approval sent with the approver's span continues
// the agent's trace and links the approver's.
func TestTraceContinuesFromTheClientsSpan(t *testing.T) {
	host := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(host))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	e, err := servicetest.StartWith(commands.Config{Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)

	agentTP := sdktrace.NewTracerProvider() // the agent's own SDK: spans not recorded here
	defer func() { _ = agentTP.Shutdown(context.Background()) }()
	c := client.New(e.Conn)
	base, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx, agent := agentTP.Tracer("agent").Start(base, "agent turn")
	defer agent.End()
	run, err := c.StartRun(ctx, client.StartRunRequest{Location: t.TempDir(), Rules: []gate.Rule{{Action: "echo", Resource: "ask *", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": "hi"})
	if _, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []client.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
		t.Fatal(err)
	}
	parentIs(t, spanNamed(t, host, "execute_tool echo"), agent.SpanContext())
	parentIs(t, spanNamed(t, host, "stepgate.commit step"), agent.SpanContext())

	host.Reset()
	asks, _ := json.Marshal(map[string]string{"text": "ask me"})
	out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 2, Calls: []client.CallRequest{{ID: "c2", Tool: "echo", Args: asks}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("asking step: %+v, %v", out, err)
	}
	asked := spanNamed(t, host, "execute_tool echo")
	parentIs(t, asked, agent.SpanContext())
	actx, approver := agentTP.Tracer("inbox").Start(base, "ops-1 approves")
	if _, err := c.Reply(actx, client.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "operator:ops-1"}); err != nil {
		t.Fatal(err)
	}
	approver.End()
	wait := spanNamed(t, host, "stepgate.wait echo")
	if wait.SpanContext.TraceID() != agent.SpanContext().TraceID() || wait.Parent.SpanID() != asked.SpanContext.SpanID() {
		t.Errorf("wait span: trace %s parent %s; want the agent's trace %s under the asking call's span %s",
			wait.SpanContext.TraceID(), wait.Parent.SpanID(), agent.SpanContext().TraceID(), asked.SpanContext.SpanID())
	}
	if len(wait.Links) != 1 || wait.Links[0].SpanContext.SpanID() != approver.SpanContext().SpanID() {
		t.Errorf("wait span links %v, want the approver's span %s", wait.Links, approver.SpanContext().SpanID())
	}
}
