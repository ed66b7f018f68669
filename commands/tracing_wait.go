package commands

import (
	"context"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The wait on a human is a span from the ticket's issue to its resolution,
// made by the host that resolves it (any host): a child of the call's span
// that the ticket recorded (its Trace), linked to the span of whoever
// replied when their request carried one. The resolve commit and the
// approved calls' execution continue the call's trace in the same way.

// waitSpanName names the span of a wait on a human for tool.
func waitSpanName(tool string) string { return "stepgate.wait " + tool }

// waits are the tickets one progress resolves, read before its first commit.
type waits struct {
	t       tracer
	run     string
	n       int
	replier trace.SpanContext // the span of the request that resolved them
	decided time.Time
	tickets []waited
	calls   map[string]*projection.Call // the step's calls, by id
}

type waited struct {
	ticket projection.Ticket
	res    events.TicketResolved
	sc     trace.SpanContext // the call's span, as the ticket recorded it
}

// resolving reads the tickets w resolves and returns ctx continuing the
// trace of the first of them (the resolve and settle commits are children
// of that call's span); ctx unchanged and nil when tracing is off.
func (b *base) resolving(ctx context.Context, w *progress) (context.Context, *waits) {
	if !b.tr.on() {
		return ctx, nil
	}
	r, err := b.header(w.run)
	if err != nil {
		return ctx, nil
	}
	ws := &waits{t: b.tr, run: w.run, n: w.step, replier: trace.SpanContextFromContext(ctx), decided: b.cfg.Clock(), calls: map[string]*projection.Call{}}
	if s := r.Step(w.step); s != nil {
		for i := range s.Calls {
			ws.calls[s.Calls[i].ID] = &s.Calls[i]
		}
	}
	for _, ev := range w.first {
		res, ok := ev.(events.TicketResolved)
		if !ok {
			continue
		}
		if t := r.Ticket(res.Ticket); t != nil {
			ws.tickets = append(ws.tickets, waited{ticket: *t, res: res, sc: client.ParseTraceparent(t.Trace)})
		}
	}
	for _, wt := range ws.tickets {
		if wt.sc.IsValid() {
			return trace.ContextWithRemoteSpanContext(ctx, wt.sc), ws
		}
	}
	return ctx, ws
}

// parent is the context a span about the call callID starts from: its
// ticket's recorded span, else ctx's.
func (ws *waits) parent(ctx context.Context, callID string) (context.Context, *waited) {
	for i := range ws.tickets {
		if wt := &ws.tickets[i]; wt.res.CallID == callID {
			if wt.sc.IsValid() {
				return trace.ContextWithRemoteSpanContext(ctx, wt.sc), wt
			}
			return ctx, wt
		}
	}
	return ctx, nil
}

// emit makes the wait spans once the resolve commit is made (err nil):
// from each ticket's issue (its ULID's time) to the reply.
func (ws *waits) emit(ctx context.Context, err error) {
	if ws == nil || err != nil {
		return
	}
	for _, wt := range ws.tickets {
		pctx, _ := ws.parent(ctx, wt.res.CallID)
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(issued(wt.ticket.ID, ws.decided))}
		if ws.replier.IsValid() && !ws.replier.Equal(wt.sc) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ws.replier}))
		}
		_, sp := ws.t.t.Start(pctx, waitSpanName(wt.ticket.Tool), opts...)
		attrs := []attribute.KeyValue{
			attribute.String(attrToolName, wt.ticket.Tool), attribute.String(attrToolCallID, wt.res.CallID),
			attribute.String(attrRun, ws.run), attribute.Int(attrStep, wt.ticket.Step),
			attribute.String(attrTicket, wt.ticket.ID), attribute.String(attrTicketKind, wt.ticket.Kind),
			attribute.String(attrReply, wt.res.Reply), attribute.Bool(attrApproved, wt.res.Approved),
		}
		if wt.res.Principal != "" {
			attrs = append(attrs, attribute.String(attrPrincipal, wt.res.Principal))
		}
		sp.SetAttributes(attrs...)
		sp.End(trace.WithTimestamp(ws.decided))
	}
}

// issued is when ticket id was issued (its ULID's millisecond), or def.
func issued(id string, def time.Time) time.Time {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return def
	}
	return ulid.Time(u.Time())
}

// startExec starts the execute_tool span of each approved (or recovered)
// call about to run: a child of its ticket's recorded span.
func (ws *waits) startExec(ctx context.Context, exec []*planned) *callSpans {
	if ws == nil {
		return nil
	}
	cs := &callSpans{t: ws.t, spans: make([]trace.Span, len(exec))}
	for i, c := range exec {
		if rc := ws.calls[c.req.ID]; rc != nil {
			c.attempt = rc.Attempts + 1
		}
		pctx, wt := ws.parent(ctx, c.req.ID)
		attrs := append(callAttrs(ws.run, ws.n, c.req), attribute.String(attrVerdict, events.VerdictAllow))
		if wt != nil {
			attrs = append(attrs, attribute.String(attrTicket, wt.ticket.ID))
		}
		_, cs.spans[i] = ws.t.t.Start(pctx, operationToolCall+" "+c.req.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	}
	return cs
}

// startCommit starts the span of commit c to its run; nil when tracing is
// off.
func (t tracer) startCommit(ctx context.Context, c *events.Commit) trace.Span {
	if !t.on() {
		return nil
	}
	_, sp := t.t.Start(ctx, "stepgate.commit "+string(c.Kind), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String(attrRun, c.Run), attribute.Int(attrStep, c.Step), attribute.String(attrCommitKind, string(c.Kind)),
		attribute.String(attrCommitID, c.ID), attribute.String(attrCommitHost, c.Host)))
	return sp
}

// endCommit ends a commit's span with the sequence it got, or its error.
func endCommit(sp trace.Span, seq uint64, err error) {
	if sp == nil {
		return
	}
	if err != nil {
		sp.SetAttributes(attribute.String(attrErrorType, Code(err)))
		sp.SetStatus(codes.Error, err.Error())
	} else {
		sp.SetAttributes(attribute.Int64(attrCommitSeq, int64(seq)))
	}
	sp.End()
}
