package commands_test

import (
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// submit submits one step of one call.
func submit(t *testing.T, h *commands.Host, run string, n int, c commands.CallRequest) *commands.StepOutcome {
	t.Helper()
	out, err := h.SubmitStep(ctxT(t), commands.SubmitStepRequest{Run: run, Step: n, Calls: []commands.CallRequest{c}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func startIn(t *testing.T, h *commands.Host, loc, project string) string {
	t.Helper()
	info, err := h.StartRun(ctxT(t), commands.StartRunRequest{Location: loc, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	return info.Run
}

// "always" on a protected path's ticket runs the call once and saves no
// approval: the next identical write asks again, and a ticket of another run
// of the project for the same path stays pending.
func TestAlwaysOnProtectedPathSavesNoGrant(t *testing.T) {
	s := steptest.Start(t, "")
	// edit: ask, so that the plain file of the patch asks and its "*" is saved.
	h, _ := loaderHost(t, s, "agents:\n  build:\n    permission:\n      edit: ask\n")
	ctx := ctxT(t)
	loc := protectedLoc(t)
	hook := call("c", "apply_patch", patch(update("src/a.go"), update(".git/hooks/pre-commit")))
	a, b := startIn(t, h, loc, "p1"), startIn(t, h, loc, "p1")
	outA := submit(t, h, a, 1, hook)
	outB := submit(t, h, b, 1, call("c", "write", builtin.WriteInput{Path: ".git/hooks/pre-commit", Content: "evil\n"}))
	if len(outA.Tickets) != 1 || len(outB.Tickets) != 1 {
		t.Fatalf("tickets %d and %d, want one each", len(outA.Tickets), len(outB.Tickets))
	}
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: outA.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Approved || res.Outcome == nil || res.Outcome.Results[0].IsError {
		t.Fatalf("always: %+v, want the patch applied", res)
	}
	if got := readAt(t, loc, ".git/hooks/pre-commit"); got != "x = 2\n" {
		t.Errorf("the approved patch left the hook %q", got)
	}
	grants, err := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	var saved []string
	for _, g := range grants {
		saved = append(saved, g.Action+" "+g.Resource)
	}
	if strings.Join(saved, ",") != "edit *" {
		t.Errorf("saved %v, want only the plain file's edit *", saved)
	}
	if st := status(t, h, b); st != projection.StatusAwaiting {
		t.Errorf("the other run's write of the hook: %s, want it still awaiting a human", st)
	}
	again := submit(t, h, a, 2, call("c", "apply_patch", patch("*** Update File: .git/hooks/pre-commit\n-x = 2\n+x = 3")))
	if len(again.Tickets) != 1 {
		t.Fatalf("the same write after always: %+v, want it to ask again", again.Results)
	}
	c := startIn(t, h, loc, "p1")
	if out := submit(t, h, c, 1, call("c", "edit", builtin.EditInput{Path: "src/a.go", OldString: "x = 2", NewString: "x = 3"})); !out.Final {
		t.Errorf("a plain file after edit * was saved: %d tickets, want it allowed", len(out.Tickets))
	}
	if out := submit(t, h, c, 2, call("c", "edit", builtin.EditInput{Path: ".git/hooks/pre-commit", OldString: "x = 2", NewString: "x = 3"})); len(out.Tickets) != 1 {
		t.Errorf("the hook after edit * was saved: %+v, want it to ask", out.Results)
	}
	// A ticket for a protected path alone: "always" saves nothing at all.
	d := startIn(t, h, loc, "p2")
	out := submit(t, h, d, 1, call("c", "write", builtin.WriteInput{Path: ".stepgate/config.yaml", Content: "agents: {}\n"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("write the project file: %+v, want it to ask", out.Results)
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if gs, err := h.Grants(ctx, commands.GrantsRequest{Project: "p2"}); err != nil || len(gs) != 0 {
		t.Errorf("always on a protected path saved %+v (%v), want nothing", gs, err)
	}
	if out := submit(t, h, d, 2, call("c", "write", builtin.WriteInput{Path: ".stepgate/config.yaml", Content: "agents: {}\n"})); len(out.Tickets) != 1 {
		t.Errorf("the identical write again: %+v, want it to ask", out.Results)
	}
}
