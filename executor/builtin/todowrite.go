package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// TodoStateKey is the run-state key todowrite sets; engine show prints it.
const TodoStateKey = "todos"

// Todo is one item of the agent's plan.
type Todo struct {
	Content  string `json:"content" jsonschema:"description=What to do,minLength=1"`
	Status   string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed,enum=cancelled"`
	Priority string `json:"priority" jsonschema:"enum=high,enum=medium,enum=low"`
}

// TodoInput is the input of todowrite: the whole new list.
type TodoInput struct {
	Todos []Todo `json:"todos" jsonschema:"description=The whole todo list; it replaces the previous one"`
}

// TodoList is todowrite's output: the list as recorded. It is the run's
// state under [TodoStateKey], committed with the result.
type TodoList []Todo

// ModelText renders the list as a checklist.
func (l TodoList) ModelText() string {
	if len(l) == 0 {
		return "The todo list is empty."
	}
	open := 0
	var b strings.Builder
	for _, t := range l {
		if t.Status == "pending" || t.Status == "in_progress" {
			open++
		}
	}
	fmt.Fprintf(&b, "%d todos, %d open\n", len(l), open)
	b.WriteString(l.Checklist())
	return strings.TrimSuffix(b.String(), "\n")
}

// Checklist renders one line per item: a status mark, the content and its
// priority.
func (l TodoList) Checklist() string {
	var b strings.Builder
	for _, t := range l {
		fmt.Fprintf(&b, "%s %s (%s)\n", statusMark(t.Status), t.Content, t.Priority)
	}
	return b.String()
}

// statusMark is a todo status as a checkbox.
func statusMark(status string) string {
	switch status {
	case "in_progress":
		return "[~]"
	case "completed":
		return "[x]"
	case "cancelled":
		return "[-]"
	case "pending":
		return "[ ]"
	}
	return ""
}

// StateChanges implements [executor.StateSetter].
func (l TodoList) StateChanges() []executor.StateChange {
	b, _ := json.Marshal(l) // strings only: cannot fail
	return []executor.StateChange{{Key: TodoStateKey, Value: b}}
}

// TodoWrite builds todowrite: it replaces the run's todo list and returns it.
// The list is run state, committed as a StateCommand in the same settle
// commit as the result. Permission: todowrite.
func TodoWrite() (*executor.Tool, error) {
	return executor.New("todowrite",
		"Replace your todo list for this run with todos (each with content, status pending|in_progress|completed|cancelled, and priority high|medium|low). Use it to plan multi-step work and to mark progress; keep at most one item in_progress.",
		func(_ context.Context, _ executor.Call, in TodoInput) (TodoList, error) {
			if in.Todos == nil {
				return TodoList{}, nil
			}
			return TodoList(in.Todos), nil
		}, executor.WithEffect(descriptor.Idempotent), executor.Anywhere())
}
