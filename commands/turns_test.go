package commands_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// A model's turns are committed in order, once each: the same turn sent
// again is answered without a commit, another response for a recorded
// turn is a conflict, a turn that is not next (or comes before the
// previous turn's step is final) is step_order, and the run's settings and
// turns are what show answers.
func TestRecordTurnOrderAndDedupe(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	settings := &events.ModelSettings{Provider: "openai", Model: "m", Task: "say hi"}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Model: settings})
	if err != nil {
		t.Fatal(err)
	}
	turn1 := events.ModelTurnRecorded{Turn: 1, Response: "r1", Text: "echoing", Stop: "tool_calls",
		Calls: []events.ModelCall{{ID: "call_a", Name: "echo", Args: `{"text":"hi"}`}}, Usage: events.ModelUsage{InputTokens: 10, OutputTokens: 2}}
	record := func(tr events.ModelTurnRecorded) (*commands.TurnRecord, error) {
		return h.RecordTurn(ctx, commands.RecordTurnRequest{Run: info.Run, Turn: tr})
	}
	if got, err := record(turn1); err != nil || got.Again {
		t.Fatalf("turn 1: %+v, %v; want committed", got, err)
	}
	commits := func() int {
		r, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
		if err != nil {
			t.Fatal(err)
		}
		return r.Commits
	}
	before := commits()
	if got, err := record(turn1); err != nil || !got.Again {
		t.Fatalf("turn 1 again: %+v, %v; want answered again", got, err)
	}
	if commits() != before {
		t.Errorf("turn 1 sent again committed: %d commits, want %d", commits(), before)
	}
	other := turn1
	other.Text = "something else"
	for _, tt := range []struct {
		why  string
		turn events.ModelTurnRecorded
		want error
	}{
		{"another response for turn 1", other, commands.ErrConflict},
		{"turn 3 after turn 1", events.ModelTurnRecorded{Turn: 3}, commands.ErrStepOrder},
		{"turn 2 before step 1 is submitted", events.ModelTurnRecorded{Turn: 2, Text: "done"}, commands.ErrStepOrder},
		{"turn 0", events.ModelTurnRecorded{Turn: 0}, commands.ErrInvalidRequest},
	} {
		if _, err := record(tt.turn); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.why, err, tt.want)
		}
	}
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("call_a", "echo", text{"hi"})}}); err != nil {
		t.Fatal(err)
	}
	turn2 := events.ModelTurnRecorded{Turn: 2, Text: "done", Stop: "stop"}
	if _, err := record(turn2); err != nil {
		t.Fatalf("turn 2 after step 1: %v", err)
	}
	if _, err := record(events.ModelTurnRecorded{Turn: 3}); !errors.Is(err, commands.ErrStepOrder) {
		t.Errorf("a turn after one without calls: %v, want step_order", err)
	}
	r, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]events.ModelTurnRecorded{turn1, turn2}, r.Turns); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	if d := cmp.Diff(settings, r.Snapshot.Model); d != "" {
		t.Errorf("settings (-want +got):\n%s", d)
	}
	if _, err := h.EndRun(ctx, commands.EndRunRequest{Run: info.Run}); err != nil {
		t.Fatal(err)
	}
	if got, err := record(turn2); err != nil || !got.Again {
		t.Errorf("turn 2 again after the end: %+v, %v; want answered again", got, err)
	}
}
