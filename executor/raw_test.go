package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

func rawDesc() descriptor.Descriptor {
	return descriptor.Descriptor{
		Name:         "mcp__srv__add",
		Description:  "adds",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}`),
	}
}

func TestNewRawValidatesArgumentsBeforeTheHandler(t *testing.T) {
	ran := 0
	tool, err := executor.NewRaw(rawDesc(), func(_ context.Context, _ executor.Call, args json.RawMessage) (executor.Result, error) {
		ran++
		return executor.TextResult("got " + string(args)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d := tool.Descriptor()
	if d.Action != "mcp__srv__add" || d.Effect != descriptor.SideEffecting {
		t.Fatalf("defaults not filled in: %+v", d)
	}
	for _, bad := range []string{`{}`, `{"a":"x"}`, `[`, `7`} {
		_, err := tool.Prepare(executor.Call{}, json.RawMessage(bad))
		var ie *executor.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), executor.InvalidInputPrefix) {
			t.Errorf("Prepare(%s) = %v, want an InputError", bad, err)
		}
	}
	if ran != 0 {
		t.Fatalf("handler ran %d times for invalid input", ran)
	}
	p, err := tool.Prepare(executor.Call{}, json.RawMessage(` {"a": 2} `))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Requests(); len(r) != 1 || r[0].Action != "mcp__srv__add" || r[0].Resources[0] != "*" {
		t.Fatalf("requests %+v", r)
	}
	if res := p.Run(context.Background()); res.IsError || res.Text() != `got {"a": 2}` {
		t.Fatalf("run = %+v", res)
	}
}

func TestNewRawRefusesInvalidDescriptors(t *testing.T) {
	run := func(context.Context, executor.Call, json.RawMessage) (executor.Result, error) {
		return executor.Result{}, nil
	}
	bad := map[string]func(*descriptor.Descriptor){
		"name": func(d *descriptor.Descriptor) { d.Name = "has space" },
		"schema": func(d *descriptor.Descriptor) {
			d.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":7}}}`)
		},
		"not an object": func(d *descriptor.Descriptor) { d.InputSchema = json.RawMessage(`{"type":"string"}`) },
		"missing":       func(d *descriptor.Descriptor) { d.InputSchema = nil },
		"external ref": func(d *descriptor.Descriptor) {
			d.InputSchema = json.RawMessage(`{"type":"object","$ref":"http://x/y.json"}`)
		},
		"output schema": func(d *descriptor.Descriptor) { d.OutputSchema = json.RawMessage(`{"type":"nope"}`) },
		"effect":        func(d *descriptor.Descriptor) { d.Effect = "sometimes" },
	}
	for why, mutate := range bad {
		d := rawDesc()
		mutate(&d)
		if _, err := executor.NewRaw(d, run); err == nil {
			t.Errorf("%s: NewRaw accepted %+v", why, d)
		}
	}
	if _, err := executor.NewRaw(rawDesc(), nil); !errors.Is(err, executor.ErrNilTool) {
		t.Errorf("nil handler: %v", err)
	}
	if _, err := executor.NewRaw(rawDesc(), run, executor.WithRequests(func(executor.Call, string) ([]descriptor.Request, error) { return nil, nil })); !errors.Is(err, executor.ErrOptionType) {
		t.Errorf("requests of another type: %v", err)
	}
}

func TestNewRawResults(t *testing.T) {
	var out executor.Result
	var fail error
	tool, err := executor.NewRaw(rawDesc(), func(context.Context, executor.Call, json.RawMessage) (executor.Result, error) {
		if out.Text() == "panic" {
			panic("boom")
		}
		return out, fail
	}, executor.WithEffect(descriptor.ReadOnly), executor.WithAction("adder"))
	if err != nil {
		t.Fatal(err)
	}
	if d := tool.Descriptor(); d.Effect != descriptor.ReadOnly || d.Action != "adder" {
		t.Fatalf("options not applied: %+v", d)
	}
	run := func() executor.Result {
		p, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		return p.Run(context.Background())
	}
	tests := []struct {
		why     string
		out     executor.Result
		fail    error
		text    string
		isError bool
	}{
		{"structured matching the output schema", executor.Result{Parts: []executor.Part{{Type: executor.PartText, Text: "3"}}, Structured: json.RawMessage(`{"sum":3}`)}, nil, "3", false},
		{"structured not matching", executor.Result{Structured: json.RawMessage(`{"sum":"x"}`)}, nil, executor.InvalidOutputPrefix, true},
		{"an error result's structure is not checked", executor.Result{IsError: true, Parts: []executor.Part{{Type: executor.PartText, Text: "bad"}}, Structured: json.RawMessage(`1`)}, nil, "bad", true},
		{"nothing", executor.Result{}, nil, executor.EmptyOutput, false},
		{"an empty error", executor.Result{IsError: true}, nil, executor.EmptyError, true},
		{"a Go error", executor.Result{}, errors.New("it broke"), "it broke", true},
		{"a panic", executor.TextResult("panic"), nil, "Tool panicked: boom", true},
	}
	for _, tt := range tests {
		out, fail = tt.out, tt.fail
		res := run()
		if res.IsError != tt.isError || !strings.HasPrefix(res.Text(), tt.text) {
			t.Errorf("%s: %+v, want text %q error %v", tt.why, res, tt.text, tt.isError)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, _ := tool.Prepare(executor.Call{}, json.RawMessage(`{"a":1}`))
	if res := p.Run(ctx); !res.IsError || !strings.HasPrefix(res.Text(), "Tool call was not started") {
		t.Errorf("cancelled: %+v", res)
	}
}

func TestNewRawRequests(t *testing.T) {
	tool, err := executor.NewRaw(rawDesc(), func(context.Context, executor.Call, json.RawMessage) (executor.Result, error) {
		return executor.TextResult("ok"), nil
	}, executor.WithRequests(func(_ executor.Call, args json.RawMessage) ([]descriptor.Request, error) {
		if strings.Contains(string(args), "13") {
			return nil, errors.New("unlucky")
		}
		return []descriptor.Request{{Action: "x", Resources: []string{string(args)}}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"a":1}`))
	if err != nil || p.Requests()[0].Resources[0] != `{"a":1}` {
		t.Fatalf("%v %+v", err, p)
	}
	if _, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"a":13}`)); err == nil || err.Error() != "Invalid tool input: unlucky" {
		t.Fatalf("refusing requests: %v", err)
	}
}

// The gate decides a raw tool's calls on the requests it raises: a raw tool
// whose calls reached the gate with no request would be allowed whatever
// the rules say (an MCP tool under a deny rule, say).
func TestNewRawGatesItsRequests(t *testing.T) {
	tool, err := executor.NewRaw(rawDesc(), func(context.Context, executor.Call, json.RawMessage) (executor.Result, error) {
		return executor.TextResult("ok"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []descriptor.Request{{Action: tool.Descriptor().Action, Resources: []string{"*"}, Save: []string{"*"}}}
	if diff := cmp.Diff(want, p.Requests()); diff != "" {
		t.Fatalf("the requests the gate decides (-want +got):\n%s", diff)
	}
}
