package commands_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step/steptest"
)

// todowrite's list is run state: committed as a StateCommand in the same
// settle commit as the result, folded into the run (the latest list wins),
// and rebuilt by a host that reads the log afresh; a failed call sets none.
func TestTodoWriteIsRunState(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	first := []builtin.Todo{{Content: "read the spec", Status: "in_progress", Priority: "high"}, {Content: "write tests", Status: "pending", Priority: "medium"}}
	second := []builtin.Todo{{Content: "read the spec", Status: "completed", Priority: "high"}, {Content: "write tests", Status: "in_progress", Priority: "medium"}}
	steps := [][]commands.CallRequest{
		{call("t1", "todowrite", builtin.TodoInput{Todos: first})},
		{call("t2", "todowrite", builtin.TodoInput{Todos: second}),
			call("t3", "todowrite", map[string]any{"todos": []map[string]string{{"content": "x", "status": "someday", "priority": "low"}}})},
	}
	for i, calls := range steps {
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: i + 1, Calls: calls})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if want := "2 todos, 2 open\n[~] read the spec (high)\n[ ] write tests (medium)"; out.Results[0].Content != want {
				t.Errorf("the model read %q, want %q", out.Results[0].Content, want)
			}
		} else if !out.Results[1].IsError {
			t.Errorf("a todo with status someday was accepted: %q", out.Results[1].Content)
		}
	}

	todos := func(h *commands.Host) []builtin.Todo {
		t.Helper()
		run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
		if err != nil {
			t.Fatal(err)
		}
		var l []builtin.Todo
		if err := json.Unmarshal(run.State[builtin.TodoStateKey], &l); err != nil {
			t.Fatalf("run state %s: %v", run.State[builtin.TodoStateKey], err)
		}
		return l
	}
	if diff := cmp.Diff(second, todos(h)); diff != "" {
		t.Errorf("run's todos (-want +got):\n%s", diff)
	}
	fresh := startHost(t, s, reg, "h2")
	caughtUp(t, h, fresh)
	if diff := cmp.Diff(second, todos(fresh)); diff != "" {
		t.Errorf("todos rebuilt from the log (-want +got):\n%s", diff)
	}

	commits, err := h.Log.ReadRun(ctx, info.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var inCommit []string
	for _, rc := range commits {
		var names []string
		for _, e := range rc.Commit.Events {
			switch e := e.(type) {
			case events.ToolResultRecorded:
				names = append(names, "result "+e.CallID)
			case events.StateCommand:
				names = append(names, "state "+e.CallID+" "+e.Key)
			}
		}
		if len(names) > 0 {
			inCommit = append(inCommit, names...)
			inCommit = append(inCommit, "|")
		}
	}
	want := []string{"result t1", "state t1 todos", "|", "result t2", "state t2 todos", "result t3", "|"}
	if diff := cmp.Diff(want, inCommit); diff != "" {
		t.Errorf("results and state commands per commit (-want +got):\n%s", diff)
	}
}
