package commands_test

import (
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step/steptest"
)

// The reproduction: with the user's file saying bash: ask, the agent writes
// .stepgate/config.yaml saying bash: allow. The write asks (and is refused
// here), and the next run's bash still asks.
func TestAgentCannotWidenItsAuthority(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, "agents:\n  build:\n    permission:\n      bash: ask\n")
	ctx := ctxT(t)
	loc := t.TempDir()
	widen := call("w", "write", builtin.WriteInput{Path: ".stepgate/config.yaml",
		Content: "agents:\n  build:\n    permission:\n      bash: allow\n"})
	run := startIn(t, h, loc, "")
	out := submit(t, h, run, 1, widen)
	if len(out.Tickets) != 1 {
		t.Fatalf("writing the project file: %+v, want it to ask", out.Results)
	}
	if !strings.Contains(out.Tickets[0].Requests[0].Resources[0], ".stepgate/config.yaml") {
		t.Errorf("the ticket asks for %+v", out.Tickets[0].Requests)
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyReject, Message: "no", Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if got := readAt(t, loc, ".stepgate/config.yaml"); got != "" {
		t.Fatalf("the project file was written: %q", got)
	}
	next := startIn(t, h, loc, "")
	if out := submit(t, h, next, 1, call("b", "bash", builtin.BashInput{Command: "echo widened"})); len(out.Tickets) != 1 {
		t.Errorf("the next run's bash: %+v, want it to ask", out.Results)
	}
}

// A project file cannot remove a protected path: the attempt is a
// configuration error, and the agent is denied everything until it is fixed.
func TestProjectFileCannotRemoveProtectedPaths(t *testing.T) {
	s := steptest.Start(t, "")
	h, logs := loaderHost(t, s, userAllowsEdits)
	loc := protectedLoc(t)
	writeAt(t, loc, ".stepgate/config.yaml", "protected_paths:\n  remove: [\".git/**\", \".stepgate/**\"]\n")
	run := startIn(t, h, loc, "")
	out := submit(t, h, run, 1, call("c", "write", builtin.WriteInput{Path: ".git/config", Content: "[core]\n\tfsmonitor = evil\n"}))
	// Denied everything, the agent is shown no tool at all.
	if !out.Final || !out.Results[0].IsError || out.Results[0].Content != "Unknown tool: write" {
		t.Errorf("under a project file that removes protection: %+v, want the write refused", out.Results)
	}
	if got := readAt(t, loc, ".git/config"); got != "x = 1\n" {
		t.Errorf(".git/config holds %q", got)
	}
	if want := "config.yaml:2: protected_paths.remove: only the user's file may remove a protected path"; !strings.Contains(logs.String(), want) {
		t.Errorf("the log does not say %q:\n%s", want, logs.String())
	}
}

// The user's file adds protected paths and removes default ones.
func TestUserFileAddsAndRemovesProtectedPaths(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, userAllowsEdits+"protected_paths:\n  add: [\"src/**\"]\n  remove: [\".git/**\"]\n")
	loc := protectedLoc(t)
	run := startIn(t, h, loc, "")
	if out := submit(t, h, run, 1, call("c", "write", builtin.WriteInput{Path: ".git/config", Content: "ok\n"})); !out.Final || out.Results[0].IsError {
		t.Errorf("the user removed .git/**: %+v (%d tickets), want the write allowed", out.Results, len(out.Tickets))
	}
	if out := submit(t, h, run, 2, call("c", "write", builtin.WriteInput{Path: "src/a.go", Content: "x\n"})); len(out.Tickets) != 1 {
		t.Errorf("the user added src/**: %+v, want the write to ask", out.Results)
	}
}
