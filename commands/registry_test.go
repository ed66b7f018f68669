package commands_test

import (
	"context"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// lintTool is a location-layer tool; version changes its description (and
// so its identity).
func lintTool(t *testing.T, version string) *executor.Tool {
	t.Helper()
	tool, err := executor.New("lint", "Lint the workspace ("+version+").",
		func(_ context.Context, _ executor.Call, in executortest.TextInput) (string, error) {
			return "linted by " + version, nil
		}, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func catalogOf(t *testing.T, h *commands.Host, run string) map[string]string {
	t.Helper()
	cat, err := h.Materialize(ctxT(t), commands.MaterializeRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range cat.Tools {
		out[d.Name] = d.Description
	}
	return out
}

func TestRegistryScopes(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h := startHost(t, s, reg, "h1")
	ctx := ctxT(t)
	v1, v2 := lintTool(t, "v1"), lintTool(t, "v2")
	a, err := h.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-a", Tools: []descriptor.Descriptor{v1.Descriptor()}})
	if err != nil {
		t.Fatal(err)
	}
	h.Install("plugin-a", v1)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	lint := []commands.CallRequest{{ID: "l", Tool: "lint", Args: []byte(`{"text":"."}`)}}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: lint})
	if err != nil || out.Results[0].Content != "linted by v1" {
		t.Fatalf("a location-layer tool: %+v, %v", out, err)
	}

	// A second scope replaces it: the call the model was shown v1 for is stale.
	if _, err := h.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-b", Tools: []descriptor.Descriptor{v2.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	out, err = h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 2, Calls: lint})
	if err != nil || out.Results[0].Content != "Stale tool call: lint" {
		t.Errorf("a call advertised before the replacement: %+v, %v; want Stale tool call: lint", out, err)
	}
	// Shown the new catalogue, the model's call reaches v2 — not installed here.
	if got := catalogOf(t, h, info.Run)["lint"]; got != "Lint the workspace (v2)." {
		t.Errorf("catalogue shows %q, want v2", got)
	}
	out, err = h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 3, Calls: lint})
	if err != nil || out.Results[0].Content != "Tool is not installed on this host: lint" {
		t.Errorf("a registration without an implementation here: %+v, %v", out, err)
	}
	// Closing scope b reveals a's registration again, also to a run whose
	// catalogue was just materialized unchanged (and is kept beside the
	// registry it came from).
	if got := catalogOf(t, h, info.Run)["lint"]; got != "Lint the workspace (v2)." {
		t.Errorf("catalogue materialized again shows %q, want v2", got)
	}
	if _, err := h.CloseScope(ctx, commands.CloseScopeRequest{Scope: "plugin-b"}); err != nil {
		t.Fatal(err)
	}
	if got := catalogOf(t, h, info.Run)["lint"]; got != "Lint the workspace (v1)." {
		t.Errorf("after closing plugin-b the catalogue shows %q, want v1 again", got)
	}
	out, err = h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 4, Calls: lint})
	if err != nil || out.Results[0].Content != "linted by v1" {
		t.Errorf("after closing plugin-b: %+v, %v", out, err)
	}
	// Another host rebuilds the location layer from the log.
	h2 := startHost(t, s, reg, "h2")
	caughtUp(t, h, h2)
	if got := catalogOf(t, h2, info.Run)["lint"]; got != "Lint the workspace (v1)." {
		t.Errorf("another host's catalogue shows %q, want v1", got)
	}
	if a.Identities["lint"] == "" {
		t.Error("no identity returned")
	}
}

func TestRegisterIsAllOrNothing(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	good := lintTool(t, "v1").Descriptor()
	bad := good
	bad.Name = "not a name"
	if _, err := h.RegisterTools(ctx, commands.RegisterRequest{Scope: "p", Tools: []descriptor.Descriptor{good, bad}}); commands.Code(err) != commands.CodeInvalidInput {
		t.Fatalf("register with a bad name: %v, want invalid_input", err)
	}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := catalogOf(t, h, info.Run)["lint"]; ok {
		t.Error("the good tool of a refused registration was registered")
	}
}

// A reply to a ticket whose tool was replaced after the model was shown it
// is refused as stale and commits nothing; the sweeper then settles the call
// as a stale tool call, and the replacement never runs for it.
func TestReplyToAStaleTicket(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	v1, v2 := lintTool(t, "v1"), lintTool(t, "v2")
	if _, err := h.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-a", Tools: []descriptor.Descriptor{v1.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	h.Install("plugin-a", v1)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "lint", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "l", Tool: "lint", Args: []byte(`{"text":"."}`)}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("lint under an ask rule: %+v, %v; want one ticket", out, err)
	}
	if _, err := h.RegisterTools(ctx, commands.RegisterRequest{Scope: "plugin-b", Tools: []descriptor.Descriptor{v2.Descriptor()}}); err != nil {
		t.Fatal(err)
	}
	h.Install("plugin-b", v2)
	before, err := h.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
	if got := commands.Code(err); got != commands.CodeTicketStale {
		t.Errorf("reply to a ticket of a replaced tool = %v (code %q), want %q", err, got, commands.CodeTicketStale)
	}
	if after, _ := h.Log.LastSeq(ctx); after != before {
		t.Errorf("the refused reply committed %d messages", after-before)
	}
	if err := h.SweepTickets(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: info.Run, Step: 1})
	if err != nil || got.Results[0].Content != "Stale tool call: lint" {
		t.Errorf("the stale ticket settles as %+v, %v; want Stale tool call: lint", got, err)
	}
}
