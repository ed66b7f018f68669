package commands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// traceRules make count_fx ask for "ask *" and deny "deny *" texts.
var traceRules = []gate.Rule{
	{Action: "count_fx", Resource: "ask *", Effect: gate.Ask},
	{Action: "count_fx", Resource: "deny *", Effect: gate.Deny},
}

// recorder is a TracerProvider whose spans are kept in memory.
func recorder(t testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// tracedHost starts a host that traces into its own in-memory exporter.
func tracedHost(t testing.TB, s *steptest.Server, reg *executor.Registry, host string, content bool) (*commands.Host, *tracetest.InMemoryExporter) {
	t.Helper()
	tp, exp := recorder(t)
	return startHostCfg(t, s, reg, commands.Config{Host: host, Tracer: tp, TraceContent: content}), exp
}

// agentSpan starts a span as an agent would before it submits a step.
func agentSpan(t testing.TB, name string) (context.Context, trace.Span) {
	tp, _ := recorder(t)
	ctx, sp := tp.Tracer("agent").Start(ctxT(t), name)
	t.Cleanup(func() { sp.End() })
	return ctx, sp
}

// named returns the ended spans called name.
func named(exp *tracetest.InMemoryExporter, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// one is the one ended span called name.
func one(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	got := named(exp, name)
	if len(got) != 1 {
		var names []string
		for _, s := range exp.GetSpans() {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans %q, want 1; spans: %s", len(got), name, strings.Join(names, ", "))
	}
	return got[0]
}

func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// wantAttrs checks the span's attributes: each named one has the value
// given ("" for absent).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, w := range want {
		v, ok := got[k]
		switch {
		case w == "" && ok:
			t.Errorf("span %s: %s = %s, want absent", s.Name, k, v.String())
		case w != "" && !ok:
			t.Errorf("span %s: no %s, want %s", s.Name, k, w)
		case w != "" && v.String() != w:
			t.Errorf("span %s: %s = %s, want %s", s.Name, k, v.String(), w)
		}
	}
}

func childOf(t *testing.T, s tracetest.SpanStub, parent trace.SpanContext) {
	t.Helper()
	if s.SpanContext.TraceID() != parent.TraceID() || s.Parent.SpanID() != parent.SpanID() {
		t.Errorf("span %s: trace %s parent %s, want a child of %s in trace %s", s.Name,
			s.SpanContext.TraceID(), s.Parent.SpanID(), parent.SpanID(), parent.TraceID())
	}
}

func tracedRun(t *testing.T, ctx context.Context, h *commands.Host) string {
	t.Helper()
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "p1", Rules: traceRules})
	if err != nil {
		t.Fatal(err)
	}
	return info.Run
}

func TestTraceAllowedCallIsASpanUnderTheCallersSpan(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h, exp := tracedHost(t, s, registry(t, &cnt), "h1", false)
	ctx, agent := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, h)
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"plain"})}}); err != nil {
		t.Fatal(err)
	}
	sp := one(t, exp, "execute_tool count_fx")
	childOf(t, sp, agent.SpanContext())
	wantAttrs(t, sp, map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "count_fx", "gen_ai.tool.call.id": "c1",
		"stepgate.verdict": "allow", "stepgate.run": run, "stepgate.step": "1", "stepgate.attempt": "1",
		"error.type": "", "stepgate.ticket": "", "gen_ai.tool.call.arguments": "", "gen_ai.tool.call.result": "",
	})
	if sp.Status.Code == codes.Error {
		t.Errorf("allowed call's span status %v, want not an error", sp.Status)
	}
	// A side-effecting call: a decide commit before the effect, a settle after.
	for _, name := range []string{"stepgate.commit decide", "stepgate.commit settle"} {
		c := one(t, exp, name)
		childOf(t, c, agent.SpanContext())
		wantAttrs(t, c, map[string]string{"stepgate.run": run, "stepgate.step": "1", "stepgate.host": "h1"})
		if _, ok := attrs(c)["stepgate.commit.seq"]; !ok {
			t.Errorf("%s: no stepgate.commit.seq", name)
		}
	}
}

func TestTraceDeniedCallSaysBlockedAndTheRule(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h, exp := tracedHost(t, s, registry(t, &cnt), "h1", false)
	ctx, agent := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, h)
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"deny me"})}}); err != nil {
		t.Fatal(err)
	}
	sp := one(t, exp, "execute_tool count_fx")
	childOf(t, sp, agent.SpanContext())
	wantAttrs(t, sp, map[string]string{
		"stepgate.verdict": "block", "error.type": "blocked", "stepgate.rule": "deny count_fx deny *",
		"stepgate.attempt": "", "stepgate.ticket": "",
	})
	if _, ok := attrs(sp)["stepgate.rule.source"]; !ok {
		t.Errorf("denied call's span has no stepgate.rule.source")
	}
	if sp.Status.Code != codes.Error {
		t.Errorf("denied call's span status %v, want an error", sp.Status)
	}
	if cnt.SideEffecting.Load() != 0 {
		t.Errorf("the denied call ran")
	}
}

func TestTraceAskedAndApprovedHasTheWaitSpan(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h, exp := tracedHost(t, s, registry(t, &cnt), "h1", false)
	ctx, agent := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, h)
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"ask me"})}})
	if err != nil {
		t.Fatal(err)
	}
	asked := one(t, exp, "execute_tool count_fx")
	childOf(t, asked, agent.SpanContext())
	ticket := out.Tickets[0].ID
	wantAttrs(t, asked, map[string]string{"stepgate.verdict": "confirm", "stepgate.ticket": ticket,
		"stepgate.rule": "ask count_fx ask *", "error.type": "", "stepgate.attempt": ""})
	if got, want := out.Tickets[0].Trace, client.Traceparent(asked.SpanContext); got != want || got == "" {
		t.Errorf("ticket's trace %q, want the call span's traceparent %q", got, want)
	}

	approver, asker := agentSpan(t, "ops-1 approves")
	if _, err := h.Reply(approver, commands.ReplyRequest{Ticket: ticket, Reply: events.ReplyOnce, Principal: "operator:ops-1"}); err != nil {
		t.Fatal(err)
	}
	wait := one(t, exp, "stepgate.wait count_fx")
	childOf(t, wait, asked.SpanContext)
	wantAttrs(t, wait, map[string]string{"stepgate.ticket": ticket, "stepgate.reply": "once", "stepgate.approved": "true",
		"stepgate.principal": "operator:ops-1", "gen_ai.tool.call.id": "c1", "stepgate.run": run})
	if wait.StartTime.After(wait.EndTime) || wait.EndTime.Before(asked.EndTime.Add(-2e6)) {
		t.Errorf("wait span from %s to %s; want from the ticket's issue to the reply (the asking span ended %s)", wait.StartTime, wait.EndTime, asked.EndTime)
	}
	if len(wait.Links) != 1 || wait.Links[0].SpanContext.SpanID() != asker.SpanContext().SpanID() {
		t.Errorf("wait span links %v, want the approver's span %s", wait.Links, asker.SpanContext().SpanID())
	}
	calls := named(exp, "execute_tool count_fx")
	if len(calls) != 2 {
		t.Fatalf("%d execute_tool spans, want the asking one and the approved run", len(calls))
	}
	ran := calls[1]
	childOf(t, ran, asked.SpanContext)
	wantAttrs(t, ran, map[string]string{"stepgate.verdict": "allow", "stepgate.ticket": ticket, "stepgate.attempt": "1", "error.type": ""})
	childOf(t, one(t, exp, "stepgate.commit resolve"), asked.SpanContext)
	settles := named(exp, "stepgate.commit settle") // the asking step's (awaiting), the approved call's
	if len(settles) != 2 {
		t.Fatalf("%d settle commit spans, want 2", len(settles))
	}
	childOf(t, settles[0], agent.SpanContext())
	childOf(t, settles[1], asked.SpanContext)
	if cnt.SideEffecting.Load() != 1 {
		t.Errorf("the approved call ran %d times, want 1", cnt.SideEffecting.Load())
	}
}

func TestTraceContentOnlyWhenOptedIn(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h, exp := tracedHost(t, s, registry(t, &cnt), "h1", true)
	ctx, _ := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, h)
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"plain"})}}); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, one(t, exp, "execute_tool count_fx"), map[string]string{
		"gen_ai.tool.call.arguments": `{"text":"plain"}`, "gen_ai.tool.call.result": "plain"})
}

func TestTraceOffRecordsNoTraceWithTheTicket(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx, _ := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, h)
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"ask me"})}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Tickets[0].Trace != "" {
		t.Errorf("untraced host recorded trace %q with the ticket, want none", out.Tickets[0].Trace)
	}
}

func TestTraceApprovalOnAnotherHostContinuesTheTrace(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	a, expA := tracedHost(t, s, reg, "h1", false)
	b, expB := tracedHost(t, s, reg, "h2", false)
	ctx, agent := agentSpan(t, "agent turn")
	run := tracedRun(t, ctx, a)
	out, err := a.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("c1", "count_fx", text{"ask me"})}})
	if err != nil {
		t.Fatal(err)
	}
	asked := one(t, expA, "execute_tool count_fx")
	childOf(t, asked, agent.SpanContext())
	caughtUp(t, a, b)
	if _, err := b.Reply(ctxT(t), commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "operator:ops-2"}); err != nil {
		t.Fatal(err)
	}
	wait := one(t, expB, "stepgate.wait count_fx")
	childOf(t, wait, asked.SpanContext)
	if len(wait.Links) != 0 {
		t.Errorf("wait span links %v; the reply carried no span, want none", wait.Links)
	}
	ran := one(t, expB, "execute_tool count_fx")
	childOf(t, ran, asked.SpanContext)
	childOf(t, one(t, expB, "stepgate.commit resolve"), asked.SpanContext)
	if n := len(named(expA, "stepgate.wait count_fx")); n != 0 {
		t.Errorf("host h1 made %d wait spans, want none (h2 resolved the ticket)", n)
	}
}
