package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// Prepared is one call whose arguments were decoded and checked. It is what the caller
// holds while it asks the gate; it has not run anything yet.
type Prepared struct {
	requests []descriptor.Request
	gated    []descriptor.Request // requests, with Root where they name paths
	observed string
	paths    []ResolvedPath
	call     settler
}

// settler runs one prepared call through the rest of its pipeline.
type settler interface {
	settle(ctx context.Context) Result
	follow()
	contain(p *sandbox.Policy, pool *sandbox.Pool)
}

// preparedCall is a Prepared with what its run needs, in one allocation.
type preparedCall[In, Out any] struct {
	Prepared
	h     *handler[In, Out]
	c     Call
	in    In
	book  pathBook // what a first Prepare recorded, until it is in c.Paths
	acted Acted    // what the call reported with Call.Acted
	// contained is what the call reported with Call.Contained.
	contained *sandbox.Enforced
}

func (p *preparedCall[In, Out]) settle(ctx context.Context) Result {
	c := p.c
	c.acted, c.contained = &p.acted, &p.contained
	res := p.h.settle(ctx, c, p.in)
	if !res.IsError {
		res.Acted = p.acted
	}
	res.Sandbox = p.contained
	if res.Refused == nil && (res.Failed || res.IsError) && p.contained != nil {
		res.Refused = outputRefusal(res.Text(), *p.contained)
	}
	return res
}

func (p *preparedCall[In, Out]) follow() { p.c.Observed = "" }

func (p *preparedCall[In, Out]) contain(pol *sandbox.Policy, pool *sandbox.Pool) {
	p.c.Sandbox, p.c.Sandboxes = pol, pool
}

// Follow says that an earlier call of the same step changed a path this
// call touches, after this call was decided: the call then runs against
// what that call left, not against what it observed when it was decided
// (Call.Observed is dropped; the real paths are still held to the
// decision). The engine calls it, before Run, only for a call that runs
// right after such a call, in model order. Not safe concurrently with Run.
func (p *Prepared) Follow() { p.call.follow() }

// Contain sets the sandbox policy the call runs under (see Call.Sandbox),
// before Run: the engine resolves it from the run's pinned profile when the
// call is about to start (a proxy's socket exists only then). Not safe
// concurrently with Run. pool, when not nil, runs its processes on warm
// helpers (see Call.Sandboxes).
func (p *Prepared) Contain(pol *sandbox.Policy, pool *sandbox.Pool) { p.call.contain(pol, pool) }

// Observed returns what the call saw when it was decided (see WithObserve),
// for the engine to record with the verdict; "" for tools that observe
// nothing.
func (p *Prepared) Observed() string { return p.observed }

// Paths returns the real paths the call's paths resolved to when it was
// decided (see Call.Resolve), for the engine to record with the verdict and
// hand back in Call.Paths when the call is prepared again; nil for a call
// that resolved none. Do not modify the slice.
func (p *Prepared) Paths() []ResolvedPath { return p.paths }

// Requests returns the permission requests the call raises, as the gate is
// to decide them and the log records them: those of the tool's request
// function, with Root (see descriptor.Request) set on each request whose
// relative resources are all paths the call resolved inside its location,
// so a rule written with the absolute path matches them too. It is the one
// list a Prepared exports: a caller that decides anything else would miss
// the absolute forms and fail open. The slice may be shared with other
// calls of the same tool: do not modify it.
func (p *Prepared) Requests() []descriptor.Request {
	if p.gated == nil { // never fewer than the tool's: a call the gate saw no request of would be allowed
		return p.requests
	}
	return p.gated
}

// Run executes the call and returns its whole result, not yet bounded: the caller
// bounds it at [OutputStore.Bound], the one place output is cut (spec/tools.md,
// "Output bounding — one boundary"). Every failure (a returned error, a panic, an
// invalid output, a context that ended before the tool started) is an error Result,
// never a Go error. ctx's cancellation stops the tool. Each Run executes the tool
// again: callers run a prepared call once.
func (p *Prepared) Run(ctx context.Context) Result { return p.call.settle(ctx) }

// settle is the pipeline of one call after Prepare: execute, encode, check against the
// output schema, render the model's text.
func (h *handler[In, Out]) settle(ctx context.Context, c Call, in In) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = ErrorResult(Panicked(v))
		}
	}()
	if err := ctx.Err(); err != nil {
		return ErrorResult(NotStarted(err))
	}
	out, err := h.fn(ctx, c, in)
	if err != nil {
		res = ErrorResult(EmptyError)
		if msg := err.Error(); msg != "" {
			res = ErrorResult(msg)
		}
		res.Refused = deniedRefusal(err)
		return res
	}
	res = h.render(out)
	if f, ok := any(out).(Failer); ok {
		res.Failed = f.Failed()
	}
	if s, ok := any(out).(StateSetter); ok && !res.IsError {
		res.State = s.StateChanges()
	}
	return res
}

// outKind says, once per tool, how its output becomes the model's text.
type outKind uint8

const (
	outJSON      outKind = iota // indented JSON of the value
	outString                   // Out is exactly string
	outStringish                // Out is a named string type
	outModelText                // Out has a ModelText() string method
)

// modelTexter is implemented by outputs that render their own text for the model.
type modelTexter interface{ ModelText() string }

func outKindOf[Out any]() outKind {
	t := reflect.TypeFor[Out]()
	switch {
	case t.Implements(reflect.TypeFor[modelTexter]()):
		return outModelText
	case t == reflect.TypeFor[string]():
		return outString
	case t.Kind() == reflect.String:
		return outStringish
	}
	return outJSON
}

// render encodes out, checks it against the output schema and builds the result.
func (h *handler[In, Out]) render(out Out) Result {
	if h.outKind == outString {
		// For derives {"type": "string"} for a plain string (it has no methods and
		// no tags), which every string satisfies: there is nothing to check or encode.
		return textResult(any(out).(string), nil)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ErrorResult(InvalidOutput(jsonDetail(err)))
	}
	doc, _, err := decodeAny(b)
	if err != nil {
		return ErrorResult(InvalidOutput(jsonDetail(err)))
	}
	if err := h.tool.output.Validate(doc); err != nil {
		return ErrorResult(InvalidOutput(err.Error()))
	}
	switch h.outKind {
	case outModelText:
		return textResult(any(out).(modelTexter).ModelText(), b)
	case outStringish:
		return textResult(reflect.ValueOf(out).String(), nil)
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + len(b)/4)
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return ErrorResult(InvalidOutput(jsonDetail(err)))
	}
	return textResult(buf.String(), b)
}

func textResult(text string, structured json.RawMessage) Result {
	if text == "" {
		text = EmptyOutput
	}
	r := TextResult(text)
	r.Structured = structured
	return r
}
