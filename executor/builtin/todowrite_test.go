package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestTodoWrite(t *testing.T) {
	tool, err := builtin.TodoWrite()
	if err != nil {
		t.Fatal(err)
	}
	list := []builtin.Todo{
		{Content: "plan", Status: "completed", Priority: "high"},
		{Content: "build", Status: "in_progress", Priority: "high"},
		{Content: "test", Status: "pending", Priority: "medium"},
		{Content: "gold-plate", Status: "cancelled", Priority: "low"},
	}
	tests := []struct {
		why   string
		in    builtin.TodoInput
		want  string
		state string
	}{
		{"a list", builtin.TodoInput{Todos: list}, "4 todos, 2 open\n[x] plan (high)\n[~] build (high)\n[ ] test (medium)\n[-] gold-plate (low)",
			`[{"content":"plan","status":"completed","priority":"high"},{"content":"build","status":"in_progress","priority":"high"},{"content":"test","status":"pending","priority":"medium"},{"content":"gold-plate","status":"cancelled","priority":"low"}]`},
		{"an empty list clears it", builtin.TodoInput{Todos: []builtin.Todo{}}, "The todo list is empty.", `[]`},
	}
	for _, tt := range tests {
		p, err := prepare(t, tool, t.TempDir(), tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		res := p.Run(context.Background())
		if res.Text() != tt.want || res.IsError {
			t.Errorf("%s: %q (error %v), want %q", tt.why, res.Text(), res.IsError, tt.want)
		}
		if diff := cmp.Diff([]executor.StateChange{{Key: builtin.TodoStateKey, Value: json.RawMessage(tt.state)}}, res.State); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", tt.why, diff)
		}
	}
	for _, bad := range []string{
		`{"todos":[{"content":"x","status":"someday","priority":"high"}]}`,
		`{"todos":[{"content":"x","status":"pending","priority":"urgent"}]}`,
		`{"todos":[{"content":"","status":"pending","priority":"high"}]}`,
		`{}`,
	} {
		if _, err := tool.Prepare(executor.Call{Location: t.TempDir()}, json.RawMessage(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
