package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/stepgate/stepgate/descriptor"
)

// ProcessLayer is the registry layer of tools a host installs in code.
const ProcessLayer = "process"

// Tool is a tool in the raw form the engine drives: JSON arguments in, a Result out.
// A typed tool's descriptor is derived from Go types by New; a tool whose descriptor
// arrives as data (an MCP server's) is built by NewRaw. Either way its schemas are
// compiled once and a call's arguments are checked against the input schema before
// its handler runs. A Tool is immutable and safe for concurrent use.
type Tool struct {
	desc     descriptor.Descriptor
	identity string
	input    *descriptor.Schema
	output   *descriptor.Schema
	prepare  func(c Call, args json.RawMessage) (*Prepared, error)
	awaits   bool // awaits a human's answers before it runs
	anywhere bool // acts on no location: runs on whichever host decides it
}

// Option adjusts a tool built by New or NewRaw.
type Option func(*options)

type options struct {
	awaits   bool
	anywhere bool
	desc     []descriptor.Option
	requests any // func(Call, In) ([]descriptor.Request, error), checked by New
	observe  any // func(Call, In) (string, error), checked by New
}

// WithEffect sets the tool's effect class (default: side_effecting).
func WithEffect(e descriptor.EffectClass) Option {
	return func(o *options) { o.desc = append(o.desc, descriptor.WithEffect(e)) }
}

// AwaitsInput marks a tool that needs a human's answers before it runs: the
// engine suspends each allowed call on an input ticket, and the tool runs
// with the reply's answers in Call.Answers.
func AwaitsInput() Option {
	return func(o *options) { o.awaits = true }
}

// Anywhere marks a tool that acts on no location — it resolves no path in
// it and starts no process there (a web fetch, a question to the user): its
// calls run on whichever host decides them. A tool without it runs only on
// a host that holds the run's location.
func Anywhere() Option {
	return func(o *options) { o.anywhere = true }
}

// WithAction sets the tool's permission action (default: descriptor.DefaultAction).
func WithAction(action string) Option {
	return func(o *options) { o.desc = append(o.desc, descriptor.WithAction(action)) }
}

// WithRequests sets how a call's permission requests are computed from its decoded
// input. Without it a call raises one request: the tool's action on resource "*",
// saved as "*". An error refuses the call as invalid input (an InputError wrapping
// it), before any permission is asked. In must be the tool's input type; New fails
// with ErrOptionType otherwise.
func WithRequests[In any](f func(c Call, in In) ([]descriptor.Request, error)) Option {
	return func(o *options) { o.requests = f }
}

// WithObserve records what a call saw at decision time: f runs when a call
// is first prepared, and its value is kept in the log with the verdict
// (PermissionDecided.Observed) and handed to the tool as Call.Observed
// when the call runs after waiting, however late — after an approval, a
// recovery, on another host. A tool compares it with the world to refuse
// acting on what the human did not see. A call that runs as it is decided
// gets no Call.Observed (nothing waited). An error refuses the call as
// invalid input. In must be the tool's input type; New fails with
// ErrOptionType otherwise.
func WithObserve[In any](f func(c Call, in In) (string, error)) Option {
	return func(o *options) { o.observe = f }
}

// New builds a tool from a typed handler: the one adapter from a typed tool to the raw
// form. It derives the descriptor with descriptor.For[In, Out] and compiles both
// schemas. The handler receives the call's context (cancelled to stop it), the Call
// and the decoded input; a returned error becomes an error result carrying its text.
//
// What the model reads of a successful call: if Out has a ModelText() string method,
// its text; else if Out is a string type, the string; else Out as indented JSON. An
// output that is not plain text is also kept as Result.Structured.
func New[In, Out any](name, description string, fn func(ctx context.Context, c Call, in In) (Out, error), opts ...Option) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %s: %w handler", name, ErrNilTool)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	d, in, out, err := descriptor.ForCompiled[In, Out](name, description, o.desc...)
	if err != nil {
		return nil, err
	}
	if out == nil { // For always derives one; kept as a guard, as Compile refused none
		return nil, fmt.Errorf("tool %s: output schema: %w: missing", name, descriptor.ErrInvalidSchema)
	}
	t := &Tool{desc: d, identity: d.Identity(ProcessLayer, ""), input: in, output: out, awaits: o.awaits, anywhere: o.anywhere}
	h := &handler[In, Out]{tool: t, fn: fn, outKind: outKindOf[Out](), flat: newFlatDecoder(reflect.TypeFor[In]())}
	h.simple = newSimpleInput(t.desc.InputSchema, h.flat)
	switch f := o.requests.(type) {
	case nil:
		h.requests = defaultRequests[In](d.Action)
	case func(Call, In) ([]descriptor.Request, error):
		h.requests = f
	default:
		return nil, fmt.Errorf("tool %s: %w: got %T, want func(executor.Call, %s) ([]descriptor.Request, error)",
			name, ErrOptionType, f, reflect.TypeFor[In]())
	}
	switch f := o.observe.(type) {
	case nil:
	case func(Call, In) (string, error):
		h.observe = f
	default:
		return nil, fmt.Errorf("tool %s: %w: got %T, want func(executor.Call, %s) (string, error)",
			name, ErrOptionType, f, reflect.TypeFor[In]())
	}
	t.prepare = h.prepare
	return t, nil
}

// defaultRequests asks for the action on everything; the slice is shared by every
// call, which is why Prepared.Requests must not be modified.
func defaultRequests[In any](action string) func(Call, In) ([]descriptor.Request, error) {
	reqs := []descriptor.Request{{Action: action, Resources: []string{"*"}, Save: []string{"*"}}}
	return func(Call, In) ([]descriptor.Request, error) { return reqs, nil }
}

// Descriptor returns the tool's descriptor.
func (t *Tool) Descriptor() descriptor.Descriptor { return t.desc }

// AwaitsInput reports whether calls wait for a human's answers first.
func (t *Tool) AwaitsInput() bool { return t.awaits }

// Placed reports whether the tool's calls act on the run's location, and so
// run only on a host that holds it (see [Anywhere]).
func (t *Tool) Placed() bool { return !t.anywhere }

// Name returns the tool's name.
func (t *Tool) Name() string { return t.desc.Name }

// Identity returns the tool's identity as a process-layer registration.
func (t *Tool) Identity() string { return t.identity }

// Prepare decodes and checks one call's arguments and computes its permission requests,
// without running anything. Empty or `null` args are read as {}. Any failure is an
// *InputError; the tool's handler is never run for it.
func (t *Tool) Prepare(c Call, args json.RawMessage) (*Prepared, error) {
	return t.prepare(c, args)
}
