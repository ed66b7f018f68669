package commands

import (
	"context"
	"strings"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the engine's spans.
const TracerName = "github.com/stepgate/stepgate/commands"

// Span attributes: the GenAI semantic conventions' for a tool call, and
// Stepgate's own.
const (
	attrOperation  = "gen_ai.operation.name"
	attrToolName   = "gen_ai.tool.name"
	attrToolCallID = "gen_ai.tool.call.id"
	attrToolType   = "gen_ai.tool.type"
	attrArguments  = "gen_ai.tool.call.arguments" // only with Config.TraceContent
	attrResult     = "gen_ai.tool.call.result"    // only with Config.TraceContent
	attrErrorType  = "error.type"

	attrRun           = "stepgate.run"
	attrStep          = "stepgate.step"
	attrVerdict       = "stepgate.verdict"
	attrRule          = "stepgate.rule"
	attrRuleSource    = "stepgate.rule.source"
	attrTicket        = "stepgate.ticket"
	attrTicketKind    = "stepgate.ticket.kind"
	attrAttempt       = "stepgate.attempt"
	attrReply         = "stepgate.reply"
	attrApproved      = "stepgate.approved"
	attrPrincipal     = "stepgate.principal"
	attrCommitKind    = "stepgate.commit.kind"
	attrCommitID      = "stepgate.commit.id"
	attrCommitSeq     = "stepgate.commit.seq"
	attrCommitHost    = "stepgate.host"
	operationToolCall = "execute_tool"
)

// error.type of a call that did not succeed, besides the code of an
// engine error (client.Code).
const (
	errBlocked   = "blocked"    // the gate denied it
	errRefused   = "refused"    // unknown or hidden tool, invalid input
	errToolError = "tool_error" // it ran and its result is an error
)

// tracer makes the engine's spans; the zero value (no TracerProvider)
// makes none, and every call site checks on() before building anything, so
// tracing off costs a branch.
type tracer struct {
	t       trace.Tracer // nil: off
	content bool         // record arguments and results
}

func newTracer(cfg Config) tracer {
	if cfg.Tracer == nil {
		return tracer{}
	}
	return tracer{t: cfg.Tracer.Tracer(TracerName), content: cfg.TraceContent}
}

func (t tracer) on() bool { return t.t != nil }

// callSpans are the execute_tool spans of a plan's calls, one each, in
// model order; nil when tracing is off.
type callSpans struct {
	t     tracer
	spans []trace.Span
}

// startCalls starts the span of every call of p, children of ctx's span (a
// client's, through the request's traceparent). A ticket records its
// call's span as its trace, so the host that resolves it continues there.
func (t tracer) startCalls(ctx context.Context, p *plan) *callSpans {
	if !t.on() {
		return nil
	}
	cs := &callSpans{t: t, spans: make([]trace.Span, len(p.calls))}
	for i, c := range p.calls {
		_, sp := t.t.Start(ctx, operationToolCall+" "+c.req.Tool, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(callAttrs(p.run, p.step, c.req)...))
		cs.spans[i] = sp
		if c.runs() {
			c.attempt = 1
		}
		if c.ticket != nil {
			c.ticket.Trace = client.Traceparent(sp.SpanContext())
		}
	}
	return cs
}

// callAttrs are what a call's span says from its start.
func callAttrs(run string, n int, cr CallRequest) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String(attrOperation, operationToolCall),
		attribute.String(attrToolName, cr.Tool),
		attribute.String(attrToolCallID, cr.ID),
		attribute.String(attrToolType, "function"),
		attribute.String(attrRun, run),
		attribute.Int(attrStep, n),
	}
}

// end ends the spans with what became of their calls; err is the step's
// error (a lost race, an outage), if any. Later calls do nothing.
func (cs *callSpans) end(calls []*planned, err error) {
	if cs == nil || cs.spans == nil {
		return
	}
	for i, sp := range cs.spans {
		cs.t.endCall(sp, calls[i], err)
	}
	cs.spans = nil
}

// endCall records the call's verdict, rule, ticket, attempt and outcome
// on sp, and ends it.
func (t tracer) endCall(sp trace.Span, c *planned, err error) {
	if !sp.IsRecording() { // not sampled
		sp.End()
		return
	}
	v := c.verdict
	attrs := make([]attribute.KeyValue, 0, 8)
	if v.Verdict != "" {
		attrs = append(attrs, attribute.String(attrVerdict, v.Verdict))
	}
	if v.Rule != nil {
		attrs = append(attrs, attribute.String(attrRule, ruleText(v.Rule)))
		if v.Rule.Source != "" {
			attrs = append(attrs, attribute.String(attrRuleSource, v.Rule.Source))
		}
	}
	if c.ticket != nil {
		attrs = append(attrs, attribute.String(attrTicket, c.ticket.ID), attribute.String(attrTicketKind, c.ticket.Kind))
	}
	if c.attempt > 0 {
		attrs = append(attrs, attribute.Int(attrAttempt, c.attempt))
	}
	if t.content {
		attrs = append(attrs, attribute.String(attrArguments, string(c.req.Args)))
		if c.terminal {
			attrs = append(attrs, attribute.String(attrResult, resultText(c.result)))
		}
	}
	kind, why := callError(c, err)
	if kind != "" {
		attrs = append(attrs, attribute.String(attrErrorType, kind))
		sp.SetStatus(codes.Error, why)
	}
	sp.SetAttributes(attrs...)
	sp.End()
}

// callError is the error.type of a call's span and its description: the
// engine's error code when the step failed, else why the call did not
// succeed; "" when it did (or waits on a human).
func callError(c *planned, err error) (string, string) {
	switch {
	case err != nil:
		return Code(err), err.Error()
	case c.verdict.Verdict == events.VerdictBlock:
		return errBlocked, c.verdict.Reason
	case c.verdict.Verdict == events.VerdictReject:
		return errRefused, c.verdict.Reason
	case c.terminal && c.result.IsError:
		return errToolError, "the tool's result is an error"
	}
	return "", ""
}

// ruleText names a rule as "<effect> <action> <resource>" (the effect and
// action are single words, so the resource is the rest).
func ruleText(r *events.Rule) string {
	return r.Effect + " " + r.Action + " " + r.Resource
}

// resultText is a result's text parts, one after the other (media parts
// as their MIME type).
func resultText(r events.ToolResultRecorded) string {
	var b strings.Builder
	for i, p := range r.Parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.Text != "" || p.MIME == "" {
			b.WriteString(p.Text)
		} else {
			b.WriteString("[" + p.MIME + "]")
		}
	}
	return b.String()
}
