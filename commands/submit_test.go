package commands_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

type text struct {
	Text string `json:"text"`
}

func TestSubmitStepDecidesEveryCall(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	loc := t.TempDir()
	if err := os.WriteFile(filepath.Join(loc, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(loc, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loc, "secrets", "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc, Rules: []gate.Rule{
		{Action: "read", Resource: "secrets/*", Effect: gate.Deny},
		{Action: "echo", Resource: "ask *", Effect: gate.Ask},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
		call("c1", "echo", text{"hi"}),
		call("c2", "read_file", map[string]string{"path": "notes.txt"}),
		call("c3", "read_file", map[string]string{"path": "secrets/key"}),
		call("c4", "nope", text{"x"}),
		call("c5", "echo", map[string]int{"text": 3}),
		call("c6", "count_fx", text{"fx"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Verdict, Content string
		IsError              bool
	}
	var rows []row
	for _, r := range got.Results {
		rows = append(rows, row{r.CallID, r.Verdict, r.Content, r.IsError})
	}
	want := []row{
		{"c1", "allow", "hi", false},
		{"c2", "allow", "hello", false},
		{"c3", "block", `blocked: denied by rule read "secrets/*" (run override)`, true},
		{"c4", "reject", "Unknown tool: nope", true},
		{"c5", "reject", "Invalid tool input: …", true},
		{"c6", "allow", "fx", false},
	}
	// The detail of a schema failure is the validator's; the prefix is ours.
	if c5 := rows[4].Content; strings.HasPrefix(c5, "Invalid tool input: ") && len(c5) > 20 {
		rows[4].Content = "Invalid tool input: …"
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("results in model order (-want +got):\n%s", diff)
	}
	if cnt.SideEffecting.Load() != 1 {
		t.Errorf("count_fx ran %d times, want 1", cnt.SideEffecting.Load())
	}
	// The projection shows the same, with the pre-effect commit for count_fx.
	run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(run.Steps); n != 1 || !run.Steps[0].Final {
		t.Fatalf("run has %d steps (final=%v), want one final step", n, n == 1 && run.Steps[0].Final)
	}
	if a := run.Steps[0].Calls[5].Attempts; a != 1 {
		t.Errorf("count_fx recorded %d starts, want 1", a)
	}
	if a := run.Steps[0].Calls[0].Attempts; a != 0 {
		t.Errorf("read-only echo recorded %d starts, want 0", a)
	}
}

func TestSubmitStepIsIdempotent(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	req := commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{"x"})}}
	first, err := h.SubmitStep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// The same calls again, with the arguments spelled differently.
	req.Calls[0].Args = []byte(`{ "text" : "x" }`)
	again, err := h.SubmitStep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("resubmission (-first +again):\n%s", diff)
	}
	if cnt.SideEffecting.Load() != 1 {
		t.Errorf("the tool ran %d times, want once", cnt.SideEffecting.Load())
	}
	req.Calls[0].Args = []byte(`{"text":"y"}`)
	if _, err := h.SubmitStep(ctx, req); !errors.Is(err, commands.ErrConflict) || commands.Code(err) != commands.CodeConflict {
		t.Errorf("same step with other calls = %v (code %q), want conflict", err, commands.Code(err))
	}
}

func TestSubmitStepRefusals(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ok := []commands.CallRequest{call("a", "echo", text{"x"})}
	tests := []struct {
		why  string
		req  commands.SubmitStepRequest
		code string
	}{
		{"step 0", commands.SubmitStepRequest{Run: info.Run, Step: 0, Calls: ok}, commands.CodeInvalidInput},
		{"no calls", commands.SubmitStepRequest{Run: info.Run, Step: 1}, commands.CodeInvalidInput},
		{"duplicate call ids", commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: append(ok, ok[0])}, commands.CodeInvalidInput},
		{"a step in the future", commands.SubmitStepRequest{Run: info.Run, Step: 3, Calls: ok}, commands.CodeStepOrder},
		{"an unknown run", commands.SubmitStepRequest{Run: "01JDZ0000000000000000000ZZ", Step: 1, Calls: ok}, commands.CodeRunNotFound},
		{"a run id that is not a ULID", commands.SubmitStepRequest{Run: "sg.>", Step: 1, Calls: ok}, commands.CodeRunNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := h.SubmitStep(ctx, tt.req)
			if got := commands.Code(err); got != tt.code {
				t.Errorf("SubmitStep = %v (code %q), want code %q", err, got, tt.code)
			}
		})
	}
	if _, err := h.EndRun(ctx, commands.EndRunRequest{Run: info.Run}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: ok}); !errors.Is(err, commands.ErrRunNotActive) {
		t.Errorf("submit after end = %v, want run not active", err)
	}
	if _, err := h.EndRun(ctx, commands.EndRunRequest{Run: info.Run}); !errors.Is(err, commands.ErrRunNotActive) {
		t.Errorf("second end = %v, want run not active", err)
	}
}

func TestStartRunRefusals(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	tests := []struct {
		why string
		req commands.StartRunRequest
	}{
		{"relative location", commands.StartRunRequest{Location: "work"}},
		{"missing location", commands.StartRunRequest{Location: filepath.Join(t.TempDir(), "gone")}},
		{"an override that widens", commands.StartRunRequest{Location: t.TempDir(),
			Rules: []gate.Rule{{Action: "*", Resource: "*", Effect: gate.Allow}}}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			if _, err := h.StartRun(ctx, tt.req); !errors.Is(err, commands.ErrInvalidRequest) {
				t.Errorf("StartRun = %v, want invalid request", err)
			}
		})
	}
}

func TestDisabledToolsBlockEverything(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), DisableTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(info.Catalog.Tools); n != 0 {
		t.Errorf("DenyAll run advertises %d tools, want none", n)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count", text{"x"})}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results[0].Content; got != "blocked: tools are disabled for this run" {
		t.Errorf("result = %q", got)
	}
	if cnt.ReadOnly.Load() != 0 {
		t.Error("a tool ran under DenyAll")
	}
}

func TestUnknownAgentIsDenyAll(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	info, err := h.StartRun(ctxT(t), commands.StartRunRequest{Agent: "no-such-agent", Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(info.Catalog.Tools); n != 0 {
		t.Errorf("an unresolvable agent sees %d tools, want none (deny-all)", n)
	}
}

// Arguments that are not JSON at all are the model's mistake: the call is
// refused as invalid input, the step is recorded (with the text the model
// sent), and a resubmission of the same step gets the same outcome.
func TestMalformedArgumentsAreInvalidInput(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	req := commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
		{ID: "a", Tool: "count_fx", Args: []byte(`{"text":`)},
		{ID: "b", Tool: "nope", Args: []byte(`not json`)},
	}}
	out, err := h.SubmitStep(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Results[0].Content; !strings.HasPrefix(got, "Invalid tool input: ") {
		t.Errorf("malformed arguments: %q, want Invalid tool input", got)
	}
	if got := out.Results[1].Content; got != "Unknown tool: nope" {
		t.Errorf("unknown tool with malformed arguments: %q", got)
	}
	if cnt.SideEffecting.Load() != 0 {
		t.Error("the tool ran on malformed arguments")
	}
	again, err := h.SubmitStep(ctx, req)
	if err != nil {
		t.Fatalf("resubmission: %v", err)
	}
	if diff := cmp.Diff(out, again); diff != "" {
		t.Errorf("resubmission (-first +again):\n%s", diff)
	}
	run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(run.Steps[0].Calls[0].Args); got != `"{\"text\":"` {
		t.Errorf("recorded arguments %s, want the text as a JSON string", got)
	}
}

// After a restart a run's earlier steps stay encoded until asked for; a
// resubmission of an old step still gets its recorded outcome, and show
// gives every step whole.
func TestOldStepsAfterRestart(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ctx := ctxT(t)
	dir := t.TempDir()
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var first *commands.StepOutcome
	reqs := make([]commands.SubmitStepRequest, 3)
	for i := range reqs {
		reqs[i] = commands.SubmitStepRequest{Run: info.Run, Step: i + 1, Calls: []commands.CallRequest{call("c", "count_fx", text{fmt.Sprint("step ", i+1)})}}
		out, err := h.SubmitStep(ctx, reqs[i])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = out
		}
	}
	want, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = startHostIn(t, s, reg, "h", dir)
	again, err := h.SubmitStep(ctx, reqs[0])
	if err != nil {
		t.Fatalf("resubmitting step 1 after a restart: %v", err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("recorded outcome of step 1 after a restart (-before +after):\n%s", diff)
	}
	got, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("show after a restart (-before +after):\n%s", diff)
	}
	if n := cnt.SideEffecting.Load(); n != 3 {
		t.Errorf("executions = %d, want 3", n)
	}
}
