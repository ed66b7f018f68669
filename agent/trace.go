package agent

import (
	"context"
	"errors"
	"strconv"

	"github.com/stepgate/stepgate/agent/model"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the loop's spans.
const TracerName = "github.com/stepgate/stepgate/agent"

// Span attributes: the OpenTelemetry GenAI semantic conventions' for a
// model request and an agent's invocation, and Stepgate's own.
const (
	attrOperation    = "gen_ai.operation.name"
	attrProvider     = "gen_ai.provider.name"
	attrSystem       = "gen_ai.system" // gen_ai.provider.name's former name, which many backends still read
	attrRequestModel = "gen_ai.request.model"
	attrMaxTokens    = "gen_ai.request.max_tokens"
	attrResponseID   = "gen_ai.response.id"
	attrFinish       = "gen_ai.response.finish_reasons"
	attrInputTokens  = "gen_ai.usage.input_tokens"
	attrOutputTokens = "gen_ai.usage.output_tokens"
	attrErrorType    = "error.type"
	attrRun          = "stepgate.run"
	attrTurn         = "stepgate.turn"
	attrAttempt      = "stepgate.attempt"

	operationChat   = "chat"
	operationInvoke = "invoke_agent"
)

// providerName is gen_ai.provider.name for a provider: the API's owner
// (openai for Chat Completions and Responses alike).
func providerName(p model.Provider) string {
	if n := p.Name(); n != "openai-responses" {
		return n
	}
	return "openai"
}

// tracer is the loop's span maker; nil Config.Tracer makes no spans.
func (l *loop) tracer() trace.Tracer {
	if l.cfg.Tracer == nil {
		return nil
	}
	return l.cfg.Tracer.Tracer(TracerName)
}

// invoke starts the span of the loop's whole drive (invoke_agent), the
// parent of its model requests and, through the requests' trace context,
// of the engine's spans of its steps; end ends it.
func (l *loop) invoke(ctx context.Context) (context.Context, func(res *Result, err error)) {
	t := l.tracer()
	if t == nil {
		return ctx, func(*Result, error) {}
	}
	ctx, sp := t.Start(ctx, operationInvoke+" "+l.agentName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String(attrOperation, operationInvoke), attribute.String("gen_ai.agent.name", l.agentName),
		attribute.String(attrProvider, providerName(l.cfg.Provider)), attribute.String(attrRequestModel, l.model),
		attribute.String(attrRun, l.run)))
	return ctx, func(res *Result, err error) {
		if res != nil {
			sp.SetAttributes(attribute.Int64(attrInputTokens, res.Usage.InputTokens), attribute.Int64(attrOutputTokens, res.Usage.OutputTokens),
				attribute.String("stepgate.run.end", res.Cause))
		}
		var aw *AwaitingError
		if err != nil && !errors.As(err, &aw) {
			sp.SetAttributes(attribute.String(attrErrorType, errorType(err)))
			sp.SetStatus(codes.Error, err.Error())
		}
		sp.End()
	}
}

// ask sends one model request (attempt n of turn) under its chat span,
// which carries the request's model and the response's id, stop reason
// and token usage, and logs both at debug level.
func (l *loop) ask(ctx context.Context, req model.Request, turn, n int) (model.Turn, error) {
	prov := providerName(l.cfg.Provider)
	l.cfg.Log.Debug("model request", "run", l.run, "turn", turn, "attempt", n, "provider", l.cfg.Provider.Name(), "model", req.Model,
		"exchanges", len(req.Conversation.Exchanges), "tools", len(req.Tools), "stream", req.Stream)
	var sp trace.Span
	if t := l.tracer(); t != nil {
		attrs := []attribute.KeyValue{attribute.String(attrOperation, operationChat), attribute.String(attrProvider, prov),
			attribute.String(attrSystem, prov), attribute.String(attrRequestModel, req.Model),
			attribute.String(attrRun, l.run), attribute.Int(attrTurn, turn), attribute.Int(attrAttempt, n)}
		if req.MaxTokens > 0 {
			attrs = append(attrs, attribute.Int64(attrMaxTokens, req.MaxTokens))
		}
		ctx, sp = t.Start(ctx, operationChat+" "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	mt, err := l.cfg.Provider.Next(ctx, req)
	if err != nil {
		l.cfg.Log.Debug("model error", "run", l.run, "turn", turn, "attempt", n, "err", l.redact(err.Error()))
		if sp != nil {
			sp.SetAttributes(attribute.String(attrErrorType, errorType(err)))
			sp.SetStatus(codes.Error, l.redact(err.Error()))
			sp.End()
		}
		return mt, err
	}
	l.cfg.Log.Debug("model response", "run", l.run, "turn", turn, "response", mt.ID, "stop", mt.Stop, "calls", len(mt.Calls),
		"input_tokens", mt.Usage.InputTokens, "output_tokens", mt.Usage.OutputTokens)
	if sp != nil {
		attrs := []attribute.KeyValue{attribute.Int64(attrInputTokens, mt.Usage.InputTokens), attribute.Int64(attrOutputTokens, mt.Usage.OutputTokens)}
		if mt.ID != "" {
			attrs = append(attrs, attribute.String(attrResponseID, mt.ID))
		}
		if mt.Stop != "" {
			attrs = append(attrs, attribute.StringSlice(attrFinish, []string{mt.Stop}))
		}
		sp.SetAttributes(attrs...)
		sp.End()
	}
	return mt, nil
}

// errorType is error.type for err: the provider's HTTP status, timeout for
// a provider that did not answer in time, else the Go type's name.
func errorType(err error) string {
	var me *model.Error
	switch {
	case errors.As(err, &me) && me.Status != 0:
		return strconv.Itoa(me.Status)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &me):
		return "transport"
	}
	return "_OTHER"
}

// redact is s without the secrets Config.Redact removes.
func (l *loop) redact(s string) string {
	if l.cfg.Redact != nil {
		return l.cfg.Redact(s)
	}
	return s
}
