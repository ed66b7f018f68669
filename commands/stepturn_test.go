package commands_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// kinds are the kinds of a run's commits, in log order.
func kinds(t *testing.T, h *commands.Host, run string) []events.Kind {
	t.Helper()
	stored, err := h.Log.ReadRun(ctxT(t), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Kind
	for i, s := range stored {
		if i > 0 && s.Commit.Prev != stored[i-1].Commit.ID {
			t.Errorf("commit %d (%s) names %s as its predecessor, want %s", i+1, s.Commit.Kind, s.Commit.Prev, stored[i-1].Commit.ID)
		}
		out = append(out, s.Commit.Kind)
	}
	return out
}

// A step that brings its model turn records the turn in a commit of its
// own before any commit of the step, whether its calls are read-only (one
// commit of the step) or change something (decide, then settle); the turn
// sent again with its step is answered with the recorded outcome and
// commits nothing; and a turn that is not the step's, or another response
// for a recorded turn, is refused with nothing committed.
func TestSubmitStepBringsItsTurn(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Model: &events.ModelSettings{Provider: "openai", Model: "m", Task: "echo, then count"}})
	if err != nil {
		t.Fatal(err)
	}
	turn := func(n int, tool string) *events.ModelTurnRecorded {
		return &events.ModelTurnRecorded{Turn: n, Response: "r", Stop: "tool_calls",
			Calls: []events.ModelCall{{ID: "call_" + tool, Name: tool, Args: `{"text":"hi"}`}}}
	}
	submit := func(n int, tool string, tr *events.ModelTurnRecorded) (*commands.StepOutcome, error) {
		return h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("call_"+tool, tool, text{"hi"})}, Turn: tr})
	}

	first, err := submit(1, "echo", turn(1, "echo"))
	if err != nil || !first.Final || first.Results[0].Content != "hi" {
		t.Fatalf("step 1 with its turn: %+v, %v", first, err)
	}
	again, err := submit(1, "echo", turn(1, "echo"))
	if err != nil {
		t.Fatalf("step 1 with its turn, sent again: %v", err)
	}
	if d := cmp.Diff(first, again); d != "" {
		t.Errorf("step 1 sent again (-first +again):\n%s", d)
	}
	if _, err := submit(2, "count_fx", turn(2, "count_fx")); err != nil {
		t.Fatalf("step 2 with its turn: %v", err)
	}
	want := []events.Kind{events.KindStart, events.KindTurn, events.KindStep, events.KindTurn, events.KindDecide, events.KindSettle}
	if d := cmp.Diff(want, kinds(t, h, info.Run)); d != "" {
		t.Errorf("commits (-want +got):\n%s", d)
	}
	before := len(kinds(t, h, info.Run))

	other := turn(1, "echo")
	other.Text = "another response"
	wrongCalls := turn(3, "echo")
	wrongCalls.Calls[0].ID = "call_other"
	for _, tt := range []struct {
		why  string
		n    int
		tool string
		turn *events.ModelTurnRecorded
		want error
	}{
		{"another response for turn 1", 1, "echo", other, commands.ErrConflict},
		{"turn 4 with step 3", 3, "echo", turn(4, "echo"), commands.ErrInvalidRequest},
		{"a turn whose call is not the step's", 3, "echo", wrongCalls, commands.ErrInvalidRequest},
		{"a turn whose tool is not the step's", 3, "echo", turn(3, "count"), commands.ErrInvalidRequest},
	} {
		if _, err := submit(tt.n, tt.tool, tt.turn); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.why, err, tt.want)
		}
	}
	if got := len(kinds(t, h, info.Run)); got != before {
		t.Errorf("refused steps committed: %d commits, want %d", got, before)
	}
	r, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Turns) != 2 || len(r.Steps) != 2 || cnt.SideEffecting.Load() != 1 {
		t.Errorf("%d turns, %d steps, count_fx ran %d times; want 2, 2, once", len(r.Turns), len(r.Steps), cnt.SideEffecting.Load())
	}
}

// A step with its turn lands on a host that is behind: once when it has
// not folded the previous step (the turn looks out of order until the
// host catches up), and once when it has not folded the run's catalogue
// commit (the turn's commit loses its race and is made again, and the
// step is planned again after it). Each turn is recorded once, before its
// step.
func TestStepWithItsTurnOnTheHostThatIsBehind(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	ha, hb := startHost(t, s, reg, "a"), startBehind(t, s, reg, "b")
	ctx := ctxT(t)
	info, err := ha.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Model: &events.ModelSettings{Provider: "openai", Model: "m", Task: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	syncNow(t, hb)
	lint := lintTool(t, "v1") // a new tool: ha's next materialize commits the run's new catalogue, which hb has not seen
	if _, err := ha.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-a", Tools: []descriptor.Descriptor{lint.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ha.Materialize(ctx, commands.MaterializeRequest{Run: info.Run}); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 4; n++ {
		h, name := hb, "b"
		if n%2 == 0 {
			h, name = ha, "a"
		}
		id := fmt.Sprintf("call_%d", n)
		tr := &events.ModelTurnRecorded{Turn: n, Response: "r", Stop: "tool_calls", Calls: []events.ModelCall{{ID: id, Name: "echo", Args: `{"text":"hi"}`}}}
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: []commands.CallRequest{call(id, "echo", text{"hi"})}, Turn: tr})
		if err != nil || !out.Final {
			t.Fatalf("step %d on %s: %+v, %v", n, name, out, err)
		}
	}
	want := []events.Kind{events.KindStart, events.KindCatalog}
	for range 4 {
		want = append(want, events.KindTurn, events.KindStep)
	}
	if d := cmp.Diff(want, kinds(t, ha, info.Run)); d != "" {
		t.Errorf("commits (-want +got):\n%s", d)
	}
}
