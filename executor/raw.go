package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// RawHandler runs one call of a tool built by [NewRaw]: args are the call's
// arguments, already checked against the input schema (empty or null read
// as {}). A returned error becomes an error result carrying its text.
type RawHandler func(ctx context.Context, c Call, args json.RawMessage) (Result, error)

// NewRaw builds a tool whose descriptor is not derived from Go types: an MCP
// server's tool, whose schemas come from the server. It validates d
// (descriptor.Validate: the name rule, action, effect class, and schemas that
// compile, the input one describing an object) and compiles its schemas once,
// so a call's arguments are checked before run sees them exactly as for a
// tool built by [New]: a call that does not match is an *InputError
// ("Invalid tool input: …") and run is not called. When d has an output
// schema, a successful result's Structured value is checked against it (an
// invalid one fails the call with [InvalidOutput]).
//
// Options: [WithEffect] and [WithAction] override d's fields; [AwaitsInput]
// as for New; [WithRequests] and [WithObserve] take json.RawMessage as their
// input type (New's ErrOptionType otherwise). Without WithRequests a call
// raises one request: the tool's action on resource "*", saved as "*".
// Typed tools are built with New; NewRaw is for descriptors that arrive as data.
func NewRaw(d descriptor.Descriptor, run RawHandler, opts ...Option) (*Tool, error) {
	if run == nil {
		return nil, fmt.Errorf("tool %s: %w handler", d.Name, ErrNilTool)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, opt := range o.desc {
		opt(&d)
	}
	d = d.WithDefaults()
	in, out, err := d.Schemas()
	if err != nil {
		return nil, err
	}
	t := &Tool{desc: d, identity: d.Identity(ProcessLayer, ""), input: in, output: out, awaits: o.awaits, anywhere: o.anywhere}
	h := &rawHandler{tool: t, run: run}
	switch f := o.requests.(type) {
	case nil:
		reqs := []descriptor.Request{{Action: d.Action, Resources: []string{"*"}, Save: []string{"*"}}}
		h.requests = func(Call, json.RawMessage) ([]descriptor.Request, error) { return reqs, nil }
	case func(Call, json.RawMessage) ([]descriptor.Request, error):
		h.requests = f
	default:
		return nil, fmt.Errorf("tool %s: %w: got %T, want func(executor.Call, json.RawMessage) ([]descriptor.Request, error)",
			d.Name, ErrOptionType, f)
	}
	switch f := o.observe.(type) {
	case nil:
	case func(Call, json.RawMessage) (string, error):
		h.observe = f
	default:
		return nil, fmt.Errorf("tool %s: %w: got %T, want func(executor.Call, json.RawMessage) (string, error)",
			d.Name, ErrOptionType, f)
	}
	t.prepare = h.prepare
	return t, nil
}

// rawHandler is the side of a raw Tool that prepares and settles its calls.
type rawHandler struct {
	tool     *Tool
	run      RawHandler
	requests func(Call, json.RawMessage) ([]descriptor.Request, error)
	observe  func(Call, json.RawMessage) (string, error)
}

// rawCall is one prepared call of a raw tool.
type rawCall struct {
	Prepared
	h    *rawHandler
	c    Call
	args json.RawMessage
	book pathBook
}

func (p *rawCall) settle(ctx context.Context) Result { return p.h.settle(ctx, p.c, p.args) }

func (p *rawCall) follow() { p.c.Observed = "" }

func (p *rawCall) contain(pol *sandbox.Policy, pool *sandbox.Pool) {
	p.c.Sandbox, p.c.Sandboxes = pol, pool
}

func (h *rawHandler) prepare(c Call, args json.RawMessage) (*Prepared, error) {
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = emptyObject
	}
	doc, _, err := decodeAny(raw)
	if err != nil {
		return nil, h.inputError("arguments are not valid JSON: "+jsonDetail(err), err)
	}
	if err := h.tool.input.Validate(doc); err != nil {
		return nil, h.inputError(err.Error(), err)
	}
	p := &rawCall{h: h, args: append(json.RawMessage(nil), raw...)}
	pr, c, err := readyCall(p, &p.book, c)
	if err != nil {
		return nil, h.inputError(err.Error(), err)
	}
	p.Prepared, p.c = pr, c
	p.call = p
	return &p.Prepared, nil
}

func (p *rawCall) requests(c Call) ([]descriptor.Request, error) { return p.h.requests(c, p.args) }

func (p *rawCall) observe(c Call) (string, error) {
	if p.h.observe == nil {
		return "", nil
	}
	return p.h.observe(c, p.args)
}

func (h *rawHandler) inputError(detail string, cause error) *InputError {
	return &InputError{Tool: h.tool.desc.Name, Detail: oneLine(detail), Err: cause}
}

// settle runs the handler and checks what it returned: an error or a panic
// is an error result, a successful structured value must match the output
// schema, and a result without any part reads as EmptyOutput (EmptyError
// when failed).
func (h *rawHandler) settle(ctx context.Context, c Call, args json.RawMessage) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = ErrorResult(Panicked(v))
		}
	}()
	if err := ctx.Err(); err != nil {
		return ErrorResult(NotStarted(err))
	}
	res, err := h.run(ctx, c, args)
	if err != nil {
		if msg := err.Error(); msg != "" {
			return ErrorResult(msg)
		}
		return ErrorResult(EmptyError)
	}
	if !res.IsError && h.tool.output != nil && len(res.Structured) > 0 {
		doc, _, err := decodeAny(res.Structured)
		if err != nil {
			return ErrorResult(InvalidOutput(jsonDetail(err)))
		}
		if err := h.tool.output.Validate(doc); err != nil {
			return ErrorResult(InvalidOutput(err.Error()))
		}
	}
	if len(res.Parts) == 0 && len(res.Structured) == 0 {
		if res.IsError {
			return ErrorResult(EmptyError)
		}
		return TextResult(EmptyOutput)
	}
	return res
}
