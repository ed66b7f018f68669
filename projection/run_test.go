package projection_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

const runID = "01JDZ0000000000000000000RR"

var at = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

func mk(id string, step int, kind events.Kind, evs ...events.Event) *events.Commit {
	return &events.Commit{ID: id, Run: runID, Step: step, Kind: kind, At: at, Events: evs}
}

// history is a small run: start, an allowed read-only step, a side-effecting
// step in two commits, and the end.
func history() []*events.Commit {
	args := json.RawMessage(`{"text":"hi"}`)
	return []*events.Commit{
		mk("c1", 0, events.KindStart, events.RunStarted{Agent: "build", Location: "/w", Narrowing: "configured"},
			events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "echo", Identity: "i"}}}),
		mk("c2", 1, events.KindStep,
			events.ToolCallRequested{CallID: "a", Tool: "echo", Args: args, Identity: "i"},
			events.PermissionDecided{CallID: "a", Verdict: events.VerdictAllow},
			events.ToolResultRecorded{CallID: "a", Parts: []events.Part{{Type: "text", Text: "hi"}}},
			events.StateCommand{CallID: "a", Key: "todos", Value: json.RawMessage(`["first"]`)},
			events.StepFinalized{Calls: 1}),
		mk("c3", 2, events.KindDecide,
			events.ToolCallRequested{CallID: "b", Tool: "echo_fx", Args: args},
			events.PermissionDecided{CallID: "b", Verdict: events.VerdictAllow},
			events.ToolCallStarted{CallID: "b", Attempt: 1}),
		mk("c4", 2, events.KindSettle,
			events.ToolResultRecorded{CallID: "b", Parts: []events.Part{{Type: "text", Text: "hi"}}},
			events.StateCommand{CallID: "b", Key: "todos", Value: json.RawMessage(`["second"]`)},
			events.StepFinalized{Calls: 1}),
		mk("c5", 0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}),
	}
}

func fold(t *testing.T, cs []*events.Commit) *projection.Run {
	t.Helper()
	r := &projection.Run{}
	for i, c := range cs {
		if err := r.Apply(uint64(i+1), c); err != nil {
			t.Fatalf("apply %s: %v", c.ID, err)
		}
	}
	return r
}

func TestRunFold(t *testing.T) {
	got := fold(t, history())
	text := []events.Part{{Type: "text", Text: "hi"}}
	args := json.RawMessage(`{"text":"hi"}`)
	want := &projection.Run{
		ID:       runID,
		Snapshot: events.RunStarted{Agent: "build", Location: "/w", Narrowing: "configured"},
		Status:   projection.StatusEnded,
		End:      &events.RunEnded{Cause: events.CauseCompleted},
		Catalog:  events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "echo", Identity: "i"}}},
		Steps: []projection.Step{
			{N: 1, Final: true, Calls: []projection.Call{{ID: "a", Tool: "echo", Args: args, Identity: "i",
				Decision: &events.PermissionDecided{CallID: "a", Verdict: "allow"},
				Result:   &events.ToolResultRecorded{CallID: "a", Parts: text}}}},
			{N: 2, Final: true, Calls: []projection.Call{{ID: "b", Tool: "echo_fx", Args: args, Attempts: 1,
				Decision: &events.PermissionDecided{CallID: "b", Verdict: "allow"},
				Result:   &events.ToolResultRecorded{CallID: "b", Parts: text}}}},
		},
		State:      map[string]json.RawMessage{"todos": json.RawMessage(`["second"]`)},
		LastSeq:    5,
		Commits:    5,
		LastCommit: "c5",
		LastAt:     at,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fold (-want +got):\n%s", diff)
	}
}

func TestRunFoldSkipsWhatItAppliedAndWhatItCannotRead(t *testing.T) {
	h := history()
	want := fold(t, h)
	r := &projection.Run{}
	for i, c := range h {
		seq := uint64(i + 1)
		// Each commit delivered twice (the stream's copy of a commit the host
		// already applied), with an unknown event from a newer build.
		c2 := *c
		c2.Events = append([]events.Event{events.Unknown{Type: "FromTheFuture", V: 1}}, c.Events...)
		for range 2 {
			if err := r.Apply(seq, &c2); err != nil {
				t.Fatalf("apply %s: %v", c.ID, err)
			}
		}
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("fold with duplicates and unknown events (-want +got):\n%s", diff)
	}
}

func TestRunFoldRejectsInconsistentCommits(t *testing.T) {
	h := history()
	tests := []struct {
		why    string
		commit *events.Commit
	}{
		{"a result for a call never requested", mk("x", 1, events.KindSettle, events.ToolResultRecorded{CallID: "nope"})},
		{"a step that skips a number", mk("x", 9, events.KindStep, events.ToolCallRequested{CallID: "z", Tool: "echo"})},
		{"the same call requested twice", mk("x", 1, events.KindStep, events.ToolCallRequested{CallID: "a", Tool: "echo"})},
		{"state set by a call never requested", mk("x", 1, events.KindSettle, events.StateCommand{CallID: "nope", Key: "todos"})},
		{"state set before the call's result", mk("x", 2, events.KindStep,
			events.ToolCallRequested{CallID: "z", Tool: "echo"}, events.StateCommand{CallID: "z", Key: "todos", Value: json.RawMessage(`[]`)})},
		{"a second start", mk("x", 0, events.KindStart, events.RunStarted{Agent: "build"})},
		{"a second result", mk("x", 1, events.KindSettle, events.ToolResultRecorded{CallID: "a"})},
		{"a step begun then a gap", mk("x", 2, events.KindStep, events.ToolCallRequested{CallID: "z", Tool: "echo"},
			events.PermissionDecided{CallID: "z", Verdict: "allow"}, events.ToolResultRecorded{CallID: "zz"})},
		{"a ticket resolved, then one unknown", mk("x", 1, events.KindResolve,
			events.TicketResolved{Ticket: "nope"})},
		{"an approval of another project", mk("x", 1, events.KindResolve,
			events.ApprovalSaved{ID: "g", Project: "elsewhere", Action: "bash", Resource: "*"})},
		{"a call added to a final step", mk("x", 1, events.KindStep, events.ToolCallRequested{CallID: "late", Tool: "echo"})},
		{"a step finalized with a call still open", mk("x", 2, events.KindStep, events.ToolCallRequested{CallID: "z", Tool: "echo"},
			events.StepFinalized{Calls: 1})},
		{"another run's commit", &events.Commit{ID: "x", Run: "OTHER", Kind: events.KindEnd, At: at,
			Events: []events.Event{events.RunEnded{Cause: events.CauseFailed}}}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			r := fold(t, h[:2])
			err := r.Apply(100, tt.commit)
			if !errors.Is(err, projection.ErrInconsistent) {
				t.Errorf("Apply = %v, want ErrInconsistent", err)
			}
			// All or nothing: the run is exactly as before the commit.
			if diff := cmp.Diff(fold(t, h[:2]), r); diff != "" {
				t.Errorf("a rejected commit changed the run (-before +after):\n%s", diff)
			}
		})
	}
	ended := fold(t, h)
	if err := ended.Apply(100, mk("x", 0, events.KindEnd, events.RunEnded{Cause: events.CauseFailed})); !errors.Is(err, projection.ErrInconsistent) {
		t.Errorf("a second end: %v, want ErrInconsistent", err)
	}
	if ended.End.Cause != events.CauseCompleted {
		t.Errorf("a second end changed the cause to %s", ended.End.Cause)
	}
	r := &projection.Run{}
	if err := r.Apply(1, mk("x", 1, events.KindStep, events.StepFinalized{})); !errors.Is(err, projection.ErrInconsistent) {
		t.Errorf("an event before RunStarted: %v, want ErrInconsistent", err)
	}
	if err := r.Apply(1, mk("x", 0, events.KindCatalog, events.Unknown{Type: "Future", V: 1})); !errors.Is(err, projection.ErrInconsistent) {
		t.Errorf("a first commit of unknown events only: %v, want ErrInconsistent", err)
	}
	if diff := cmp.Diff(&projection.Run{}, r); diff != "" {
		t.Errorf("commits refused before the start made a run (-none +got):\n%s", diff)
	}
}

func Example() {
	r := &projection.Run{}
	for i, c := range history() {
		if err := r.Apply(uint64(i+1), c); err != nil {
			panic(err)
		}
	}
	fmt.Println(r.Status, len(r.Steps), r.Steps[1].Calls[0].Attempts)
	// Output: ended 2 1
}
