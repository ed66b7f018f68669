package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/internal/jsonfast"
)

// handler is the typed side of a Tool: everything that needs In and Out.
type handler[In, Out any] struct {
	tool     *Tool
	fn       func(ctx context.Context, c Call, in In) (Out, error)
	requests func(c Call, in In) ([]descriptor.Request, error)
	observe  func(c Call, in In) (string, error) // nil unless WithObserve
	outKind  outKind
	flat     *flatDecoder // nil unless In is a flat struct
	simple   *simpleInput // nil unless In's schema is plain as well
}

var emptyObject = []byte("{}")

func (h *handler[In, Out]) prepare(c Call, args json.RawMessage) (*Prepared, error) {
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = emptyObject
	}
	var in In
	if h.simple != nil && h.simple.decodeBytes(raw, reflect.ValueOf(&in)) {
		return h.prepared(c, in)
	}
	in = *new(In)
	doc, dups, err := decodeAny(raw)
	if err != nil {
		return nil, h.inputError("arguments are not valid JSON: "+jsonDetail(err), err)
	}
	if h.simple != nil && !dups && h.simple.decode(doc, reflect.ValueOf(&in)) {
		return h.prepared(c, in)
	}
	in = *new(In)
	if err := h.tool.input.Validate(doc); err != nil {
		return nil, h.inputError(err.Error(), err)
	}
	// Unknown fields were refused by the schema: For derives it from In with
	// additionalProperties false on every object, so it and the decoder agree on which
	// fields exist (and the schema, unlike encoding/json, does not fold case). What is
	// left for the decoder is what the schema cannot see: a number too large for its
	// Go type, say.
	if h.flat == nil || dups || !h.flat.decode(doc, reflect.ValueOf(&in)) {
		in = *new(In)
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, h.inputError(jsonDetail(err), err)
		}
	}
	return h.prepared(c, in)
}

// prepared computes the requests of a decoded call and readies it to run
// (see readyCall).
func (h *handler[In, Out]) prepared(c Call, in In) (*Prepared, error) {
	p := &preparedCall[In, Out]{h: h, in: in}
	pr, c, err := readyCall(p, &p.book, c) // the book in the call's one allocation
	if err != nil {
		return nil, h.inputError(err.Error(), err)
	}
	p.Prepared, p.c = pr, c
	p.call = p
	return &p.Prepared, nil
}

func (p *preparedCall[In, Out]) requests(c Call) ([]descriptor.Request, error) {
	return p.h.requests(c, p.in)
}

func (p *preparedCall[In, Out]) observe(c Call) (string, error) {
	if p.h.observe == nil {
		return "", nil
	}
	return p.h.observe(c, p.in)
}

func (h *handler[In, Out]) inputError(detail string, cause error) *InputError {
	return &InputError{Tool: h.tool.desc.Name, Detail: oneLine(detail), Err: cause}
}

// decoded is a decoded call of a typed or a raw tool: what readyCall asks
// of it.
type decoded interface {
	requests(c Call) ([]descriptor.Request, error)
	observe(c Call) (string, error) // "", nil for a tool that observes nothing
}

// readyCall computes a decoded call's permission requests (a panic in the
// tool's request function refuses the call rather than taking the engine
// down) and what it observes, and returns its Prepared and its Call. On a
// first decision (no Paths handed back) it records in book the real path of
// every path the tool resolves meanwhile (see Call.Resolve). The
// observation is kept for the verdict, not handed to the tool: a call that
// runs as it is decided waited for no one, and acts on what it finds; one
// handed back (an approved or recovered call) is the tool's to compare.
func readyCall(d decoded, book *pathBook, c Call) (Prepared, Call, error) {
	first := c.Paths == nil
	book.again = !first
	c.book = book
	reqs, err := safeRequests(d, c)
	if err != nil {
		return Prepared{}, c, err
	}
	observed := c.Observed
	if observed == "" {
		if observed, err = d.observe(c); err != nil {
			return Prepared{}, c, err
		}
	}
	if first {
		c.Paths = book.paths
	}
	c.book = nil
	return Prepared{requests: reqs, gated: book.withRoots(reqs), observed: observed, paths: c.Paths}, c, nil
}

// safeRequests runs the call's request function, turning a panic in it
// into an error.
func safeRequests(d decoded, c Call) (reqs []descriptor.Request, err error) {
	defer func() {
		if v := recover(); v != nil {
			reqs, err = nil, fmt.Errorf("computing permission requests panicked: %v", v)
		}
	}()
	return d.requests(c)
}

// decodeAny decodes raw for the schema validator. Numbers stay json.Number,
// so bounds are checked exactly and the typed decode reads the digits as
// written.
func decodeAny(raw []byte) (doc any, dups bool, err error) {
	if v, dups, ok := jsonfast.Parse(raw); ok {
		return v, dups, nil
	}
	err = json.Unmarshal(raw, new(any)) // not JSON: encoding/json words the error
	if err == nil {
		err = errors.New("arguments are not a single JSON value")
	}
	return nil, false, err
}

// jsonDetail words an encoding/json error for the model: without the "json: " prefix
// and, for a value that does not fit its Go type, with the JSON location instead of
// Go type names.
func jsonDetail(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		return fmt.Sprintf("at '/%s': cannot decode %s as %s", strings.ReplaceAll(te.Field, ".", "/"), te.Value, te.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
