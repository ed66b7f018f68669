package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

type textIn struct {
	Text string `json:"text"`
	N    int    `json:"n,omitempty"`
}

type optIn struct {
	N int `json:"n,omitempty"`
}

// counted builds a tool whose handler counts its calls and returns fn's result.
func counted[In, Out any](t *testing.T, name string, fn func(ctx context.Context, c executor.Call, in In) (Out, error), opts ...executor.Option) (*executor.Tool, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	tool, err := executor.New(name, "test tool", func(ctx context.Context, c executor.Call, in In) (Out, error) {
		n.Add(1)
		return fn(ctx, c, in)
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tool, &n
}

func echoText(_ context.Context, _ executor.Call, in textIn) (string, error) { return in.Text, nil }

func TestPrepareInput(t *testing.T) {
	req, reqCalls := counted(t, "req", echoText)
	opt, optCalls := counted(t, "opt", func(_ context.Context, _ executor.Call, in optIn) (string, error) {
		return strings.Repeat("x", in.N), nil
	})
	tests := []struct {
		why  string
		tool *executor.Tool
		args string
		want string // "" means the call is valid; else the exact error text
	}{
		{why: "null args read as {}", tool: opt, args: "null"},
		{why: "absent args read as {}", tool: opt, args: ""},
		{why: "blank args read as {}", tool: opt, args: " \n\t"},
		{why: "null padded with blanks reads as {}", tool: opt, args: " null "},
		{why: "valid arguments", tool: req, args: `{"text":"hi","n":3}`},
		{why: "null args are {}, so required fields are missing", tool: req, args: "null",
			want: "Invalid tool input: missing property 'text'"},
		{why: "missing required field", tool: req, args: `{"n":1}`,
			want: "Invalid tool input: missing property 'text'"},
		{why: "unknown field", tool: opt, args: `{"n":1,"x":true}`,
			want: "Invalid tool input: additional property 'x' not allowed"},
		{why: "encoding/json would fold case; the schema does not", tool: req, args: `{"TEXT":"a"}`,
			want: "Invalid tool input: additional property 'TEXT' not allowed; missing property 'text'"},
		{why: "wrong type", tool: req, args: `{"text":1}`,
			want: "Invalid tool input: at '/text': got number, want string"},
		{why: "integer field given a fraction", tool: req, args: `{"text":"a","n":1.5}`,
			want: "Invalid tool input: at '/n': got number, want integer"},
		{why: "integer beyond int64 fails to decode", tool: req, args: `{"text":"a","n":99999999999999999999}`,
			want: "Invalid tool input: at '/n': cannot decode number 99999999999999999999 as int"},
		{why: "not an object", tool: req, args: `["text"]`,
			want: "Invalid tool input: got array, want object"},
		{why: "truncated JSON", tool: req, args: `{"text":`,
			want: "Invalid tool input: arguments are not valid JSON: unexpected end of JSON input"},
		{why: "two values", tool: opt, args: `{} {}`,
			want: "Invalid tool input: arguments are not valid JSON: invalid character '{' after top-level value"},
		{why: "syntax error", tool: opt, args: `{n:1}`,
			want: "Invalid tool input: arguments are not valid JSON: invalid character 'n' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		p, err := tt.tool.Prepare(executor.Call{}, json.RawMessage(tt.args))
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: Prepare(%q) = %v, want success", tt.why, tt.args, err)
			} else if res := p.Run(context.Background()); res.IsError {
				t.Errorf("%s: Run = %q", tt.why, res.Text())
			}
			continue
		}
		var ie *executor.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: Prepare(%q) = %v, want *InputError", tt.why, tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("%s: error text (-want +got):\n%s", tt.why, diff)
		}
		if ie.Tool != tt.tool.Name() {
			t.Errorf("%s: InputError.Tool = %q", tt.why, ie.Tool)
		}
	}
	valid := 0
	for _, tt := range tests {
		if tt.want == "" {
			valid++
		}
	}
	if got := reqCalls.Load() + optCalls.Load(); got != int64(valid) {
		t.Errorf("handlers ran %d times, want %d (once per valid call, never for invalid input)", got, valid)
	}
}

type status struct {
	Status string `json:"status" jsonschema:"enum=ok,enum=failed"`
}

type listing struct {
	Files []string `json:"files"`
	More  bool     `json:"more,omitempty"`
}

type summary struct {
	Count int `json:"count"`
}

func (s summary) ModelText() string {
	if s.Count == 0 {
		return ""
	}
	return strings.Repeat("*", s.Count)
}

type label string

func TestRunResults(t *testing.T) {
	build := func(tool *executor.Tool, err error) *executor.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	str := func(s string, err error) *executor.Tool {
		return build(executor.New("str", "d", func(context.Context, executor.Call, optIn) (string, error) { return s, err }))
	}
	tests := []struct {
		why  string
		tool *executor.Tool
		want executor.Result
	}{
		{why: "a string output is the text", tool: str("hello\nworld", nil),
			want: executor.Result{Parts: []executor.Part{{Type: "text", Text: "hello\nworld"}}}},
		{why: "an empty successful output says so", tool: str("", nil),
			want: executor.Result{Parts: []executor.Part{{Type: "text", Text: executor.EmptyOutput}}}},
		{why: "a returned error keeps its text", tool: str("ignored", errors.New("open notes.txt: permission denied")),
			want: executor.ErrorResult("open notes.txt: permission denied")},
		{why: "an error without text is not an empty success", tool: str("", errors.New("")),
			want: executor.ErrorResult(executor.EmptyError)},
		{why: "a panic is an error result", tool: build(executor.New("panic", "d",
			func(context.Context, executor.Call, optIn) (string, error) { panic("boom") })),
			want: executor.ErrorResult("Tool panicked: boom")},
		{why: "a struct output is indented JSON and kept structured", tool: build(executor.New("ls", "d",
			func(context.Context, executor.Call, optIn) (listing, error) {
				return listing{Files: []string{"a", "b"}}, nil
			})),
			want: executor.Result{
				Parts:      []executor.Part{{Type: "text", Text: "{\n  \"files\": [\n    \"a\",\n    \"b\"\n  ]\n}"}},
				Structured: json.RawMessage(`{"files":["a","b"]}`),
			}},
		{why: "ModelText renders the text, the value stays structured", tool: build(executor.New("sum", "d",
			func(context.Context, executor.Call, optIn) (summary, error) { return summary{Count: 3}, nil })),
			want: executor.Result{
				Parts:      []executor.Part{{Type: "text", Text: "***"}},
				Structured: json.RawMessage(`{"count":3}`),
			}},
		{why: "empty ModelText is an empty output", tool: build(executor.New("sum0", "d",
			func(context.Context, executor.Call, optIn) (summary, error) { return summary{}, nil })),
			want: executor.Result{
				Parts:      []executor.Part{{Type: "text", Text: executor.EmptyOutput}},
				Structured: json.RawMessage(`{"count":0}`),
			}},
		{why: "a named string type is text too", tool: build(executor.New("label", "d",
			func(context.Context, executor.Call, optIn) (label, error) { return "urgent", nil })),
			want: executor.Result{Parts: []executor.Part{{Type: "text", Text: "urgent"}}}},
		{why: "an output outside its schema's enum", tool: build(executor.New("status", "d",
			func(context.Context, executor.Call, optIn) (status, error) { return status{Status: "maybe"}, nil })),
			want: executor.ErrorResult("Tool returned an invalid value for its output schema: at '/status': value must be one of 'ok', 'failed'")},
		{why: "a nil slice encodes as null, which the schema refuses", tool: build(executor.New("ls0", "d",
			func(context.Context, executor.Call, optIn) (listing, error) { return listing{}, nil })),
			want: executor.ErrorResult("Tool returned an invalid value for its output schema: at '/files': got null, want array")},
		{why: "an output JSON cannot encode", tool: build(executor.New("nan", "d",
			func(context.Context, executor.Call, optIn) (float64, error) { return math.NaN(), nil })),
			want: executor.ErrorResult("Tool returned an invalid value for its output schema: unsupported value: NaN")},
	}
	for _, tt := range tests {
		p, err := tt.tool.Prepare(executor.Call{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		if diff := cmp.Diff(tt.want, p.Run(context.Background())); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestRunContext(t *testing.T) {
	call := executor.Call{Run: "r1", Agent: "build", Step: 4, CallID: "c9", Location: "/ws"}
	var got executor.Call
	started := make(chan struct{})
	tool, calls := counted(t, "ctx", func(ctx context.Context, c executor.Call, _ optIn) (string, error) {
		got = c
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})

	ctx, cancel := context.WithCancel(context.Background())
	p, err := tool.Prepare(call, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan executor.Result)
	go func() { done <- p.Run(ctx) }()
	<-started
	cancel()
	if diff := cmp.Diff(executor.ErrorResult("context canceled"), <-done); diff != "" {
		t.Errorf("cancellation stops the tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(call, got, cmpopts.IgnoreUnexported(executor.Call{})); diff != "" {
		t.Errorf("the tool sees the call (-want +got):\n%s", diff)
	}

	// A context that ended before Run never starts the tool.
	before := calls.Load()
	res := p.Run(ctx)
	if diff := cmp.Diff(executor.ErrorResult("Tool call was not started: context canceled"), res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if calls.Load() != before {
		t.Error("the tool ran with a cancelled context")
	}
}

func TestRequests(t *testing.T) {
	def, err := executor.New("grep", "d", echoText)
	if err != nil {
		t.Fatal(err)
	}
	edit, err := executor.New("write", "d", echoText)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := executor.New("custom", "d", echoText, executor.WithRequests(func(c executor.Call, in textIn) ([]descriptor.Request, error) {
		if in.Text == "bad" {
			return nil, errRefused
		}
		if in.Text == "panic" {
			panic("oops")
		}
		return []descriptor.Request{{Action: "custom", Resources: []string{c.Location + ":" + in.Text}}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		why     string
		tool    *executor.Tool
		args    string
		want    []descriptor.Request
		wantErr string
	}{
		{why: "by default, the action on everything, saved as everything", tool: def, args: `{"text":"a"}`,
			want: []descriptor.Request{{Action: "grep", Resources: []string{"*"}, Save: []string{"*"}}}},
		{why: "the default request uses the default action", tool: edit, args: `{"text":"a"}`,
			want: []descriptor.Request{{Action: "edit", Resources: []string{"*"}, Save: []string{"*"}}}},
		{why: "WithRequests sees the call and the decoded input", tool: custom, args: `{"text":"a"}`,
			want: []descriptor.Request{{Action: "custom", Resources: []string{"/ws:a"}}}},
		{why: "a refusal is invalid input", tool: custom, args: `{"text":"bad"}`,
			wantErr: "Invalid tool input: refused by test"},
		{why: "a panic is invalid input, not a crash", tool: custom, args: `{"text":"panic"}`,
			wantErr: "Invalid tool input: computing permission requests panicked: oops"},
	}
	for _, tt := range tests {
		p, err := tt.tool.Prepare(executor.Call{Location: "/ws"}, json.RawMessage(tt.args))
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: Prepare = %v, want %q", tt.why, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		if diff := cmp.Diff(tt.want, p.Requests()); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.why, diff)
		}
	}
	_, err = custom.Prepare(executor.Call{}, json.RawMessage(`{"text":"bad"}`))
	if !errors.Is(err, errRefused) {
		t.Errorf("InputError does not unwrap to the request function's error: %v", err)
	}
}

var errRefused = errors.New("refused by test")

func TestNewErrors(t *testing.T) {
	tests := []struct {
		why  string
		err  error
		want error
	}{
		{why: "WithRequests for another input type", want: executor.ErrOptionType, err: func() error {
			_, err := executor.New("t", "d", echoText, executor.WithRequests(func(executor.Call, optIn) ([]descriptor.Request, error) { return nil, nil }))
			return err
		}()},
		{why: "WithObserve for another input type", want: executor.ErrOptionType, err: func() error {
			_, err := executor.New("t", "d", echoText, executor.WithObserve(func(executor.Call, optIn) (string, error) { return "", nil }))
			return err
		}()},
		{why: "nil handler", want: executor.ErrNilTool, err: func() error {
			_, err := executor.New[textIn, string]("t", "d", nil)
			return err
		}()},
		{why: "bad name", want: descriptor.ErrInvalidName, err: func() error {
			_, err := executor.New("no such", "d", echoText)
			return err
		}()},
		{why: "input must be an object", want: descriptor.ErrInvalidSchema, err: func() error {
			_, err := executor.New("t", "d", func(context.Context, executor.Call, string) (string, error) { return "", nil })
			return err
		}()},
		{why: "bad effect class", want: descriptor.ErrInvalidEffect, err: func() error {
			_, err := executor.New("t", "d", echoText, executor.WithEffect("often"))
			return err
		}()},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: New = %v, want %v", tt.why, tt.err, tt.want)
		}
	}
}

func TestToolDescriptorAndIdentity(t *testing.T) {
	a, err := executor.New("echo", "Echo.", echoText, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	b, err := executor.New("echo", "Echo.", echoText, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	want, err := descriptor.For[textIn, string]("echo", "Echo.", descriptor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, a.Descriptor()); diff != "" {
		t.Errorf("descriptor (-want +got):\n%s", diff)
	}
	if a.Identity() != b.Identity() || a.Identity() != want.Identity("process", "") {
		t.Errorf("identities %s, %s, want %s", a.Identity(), b.Identity(), want.Identity("process", ""))
	}
}

func TestResultText(t *testing.T) {
	tests := []struct {
		why  string
		r    executor.Result
		want string
	}{
		{why: "no parts", r: executor.Result{}, want: ""},
		{why: "one text part", r: executor.ErrorResult("x"), want: "x"},
		{why: "text parts joined by newlines, media left out", r: executor.Result{Parts: []executor.Part{
			{Type: "text", Text: "a"}, {Type: "media", MIME: "image/png", Data: []byte{1}}, {Type: "text", Text: "b"},
		}}, want: "a\nb"},
		{why: "only media", r: executor.Result{Parts: []executor.Part{{Type: "media", MIME: "image/png"}}}, want: ""},
	}
	for _, tt := range tests {
		if got := tt.r.Text(); got != tt.want {
			t.Errorf("%s: Text() = %q, want %q", tt.why, got, tt.want)
		}
	}
}

func TestModelVisibleStrings(t *testing.T) {
	got := []string{
		executor.UnknownTool("x"),
		executor.StaleTool("x"),
		executor.NotInstalled("x"),
		executor.InvalidInput("d"),
		executor.InvalidOutput("d"),
		executor.Panicked(errors.New("e")),
		(&executor.InputError{Detail: "d"}).Error(),
	}
	want := []string{
		"Unknown tool: x",
		"Stale tool call: x",
		"Tool is not installed on this host: x",
		"Invalid tool input: d",
		"Tool returned an invalid value for its output schema: d",
		"Tool panicked: e",
		"Invalid tool input: d",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
