package commands_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// A step of 5,000 calls whose results, each within the output bounds, sum
// to more than one message still settles: results are shortened to
// previews naming files that hold them whole, every call's result is
// recorded and the step is final — decided and settled in one commit
// (read-only calls) or in two (side-effecting ones).
func TestFiveThousandResultsSettleInOneMessage(t *testing.T) {
	for _, tool := range []string{"repeat", "repeat_fx"} {
		t.Run(tool, func(t *testing.T) {
			s := steptest.Start(t, "")
			var cnt counter
			h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", ToolOutputDir: t.TempDir(), MaxCalls: 5000})
			ctx := ctxT(t)
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			line := "0123456789abcdefgh\n" // 100 of them: 1.9 KB of output a call, 9.5 MB a step
			whole := strings.Repeat(line, 100)
			calls := make([]commands.CallRequest, 5000)
			for i := range calls {
				calls[i] = call(fmt.Sprint("c", i), tool, map[string]any{"text": line, "times": 100})
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls})
			if err != nil {
				t.Fatalf("a step of 5,000 calls of 1.9 KB output: %v", err)
			}
			run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Steps) != 1 || !run.Steps[0].Final || len(run.Steps[0].Calls) != len(calls) {
				t.Fatalf("the step is not final with every call: %d steps", len(run.Steps))
			}
			if !out.Final || len(out.Results) != len(calls) {
				t.Fatalf("outcome final %v with %d results, want final with %d", out.Final, len(out.Results), len(calls))
			}
			shortened := 0
			for i, c := range run.Steps[0].Calls {
				r := out.Results[i]
				if c.Result == nil || r.CallID != calls[i].ID || r.IsError {
					t.Fatalf("call %s: result %+v recorded %v", calls[i].ID, r, c.Result != nil)
				}
				if r.Content == whole {
					continue
				}
				shortened++
				if len(c.Result.Files) != 1 || !strings.Contains(r.Content, executor.Marker(c.Result.Files[0])) {
					t.Fatalf("call %s was shortened to %q without naming its file %v", r.CallID, r.Content, c.Result.Files)
				}
				if b, err := os.ReadFile(c.Result.Files[0]); err != nil || string(b) != whole {
					t.Fatalf("call %s: its file holds %d bytes (%v), want the whole output", r.CallID, len(b), err)
				}
			}
			if shortened == 0 {
				t.Fatal("no result was shortened, yet 9.5 MB of results fit one message")
			}
			t.Logf("%s: %d of %d results shortened to a preview and a file", tool, shortened, len(calls))
		})
	}
}

// A step whose arguments (and the permission requests derived from them)
// cannot fit one commit is refused as invalid input before anything is
// committed or run; a step with more calls than the bound is too.
func TestStepTooLargeToDecideIsRefusedUpFront(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", MaxCalls: 200})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	many := func(n, size int) []commands.CallRequest {
		calls := make([]commands.CallRequest, n)
		for i := range calls {
			calls[i] = call(fmt.Sprint("c", i), "count_fx", text{strings.Repeat("x", size)})
		}
		return calls
	}
	tests := []struct {
		why   string
		calls []commands.CallRequest
	}{
		{"arguments over the budget", many(100, 100_000)},
		{"arguments within it, their permission requests not", many(60, 70_000)},
		{"more calls than the bound", many(201, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: tt.calls})
			if got := commands.Code(err); got != commands.CodeInvalidInput {
				t.Fatalf("SubmitStep = %v (code %q), want invalid_input", err, got)
			}
		})
	}
	if n := cnt.SideEffecting.Load(); n != 0 {
		t.Errorf("%d calls ran", n)
	}
	run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != 0 {
		t.Errorf("the run has %d steps, want none committed", len(run.Steps))
	}
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: many(200, 1)}); err != nil {
		t.Errorf("a step of exactly the bound: %v", err)
	}
}

// A request whose commit cannot fit one message, whatever the command, is
// invalid input, not an internal error: here a run's rules.
func TestACommitTooLargeIsInvalidInput(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	rules := make([]gate.Rule, 90)
	for i := range rules {
		rules[i] = gate.Rule{Action: "bash", Resource: strings.Repeat("x", 100_000), Effect: gate.Deny}
	}
	_, err := h.StartRun(ctxT(t), commands.StartRunRequest{Location: t.TempDir(), Rules: rules})
	if got := commands.Code(err); got != commands.CodeInvalidInput {
		t.Fatalf("a run with 9 MB of rules: %v (code %q), want invalid_input", err, got)
	}
}
