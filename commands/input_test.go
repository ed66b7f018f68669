package commands_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/step/steptest"
)

// A tool that awaits input suspends its call on an input ticket; the reply
// carries the answers, and the tool runs with them.
func TestInputTicketCarriesTheAnswers(t *testing.T) {
	h := askingHost(t)
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{call("q", "ask_human", text{"which branch?"})}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Final || len(out.Tickets) != 1 || out.Tickets[0].Kind != events.TicketInput {
		t.Fatalf("outcome %+v, want one input ticket", out)
	}
	id := out.Tickets[0].ID
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: id, Reply: events.ReplyOnce, Principal: "ops"}); commands.Code(err) != commands.CodeTicketKind {
		t.Errorf("an approval of an input ticket: %v, want ticket_kind", err)
	}
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: id, Reply: events.ReplyAnswer, Answers: json.RawMessage(`["main"]`), Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Outcome.Results[0].Content; got != `asked which branch?, answered ["main"]` {
		t.Errorf("result = %q", got)
	}
}

// A saved approval can be revoked: later calls ask again.
func TestRevokedGrantNoLongerAllows(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	run, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask me"}))
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	grants, _ := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if len(grants) != 1 {
		t.Fatalf("grants = %+v", grants)
	}
	g, err := h.RevokeGrant(ctx, commands.RevokeRequest{ID: grants[0].ID, Principal: "ops"})
	if err != nil || g.Revoked == nil || g.Revoked.Principal != "ops" {
		t.Fatalf("revoke = %+v, %v", g, err)
	}
	if left, _ := h.Grants(ctx, commands.GrantsRequest{Project: "p1"}); len(left) != 0 {
		t.Errorf("grants after revoking: %+v", left)
	}
	again, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 2, Calls: []commands.CallRequest{call("b", "count_fx", text{"ask again"})}})
	if err != nil || again.Final || len(again.Tickets) != 1 {
		t.Errorf("after the revocation a covered call: %+v, %v; want it to ask again", again, err)
	}
	if _, err := h.RevokeGrant(ctx, commands.RevokeRequest{ID: "01JDZ0000000000000000000ZZ", Principal: "ops"}); commands.Code(err) != commands.CodeGrantNotFound {
		t.Errorf("revoking an unknown grant: %v, want grant_not_found", err)
	}
	// A host started afterwards folds the revocation from the grant subject.
	h2 := startHost(t, s, registry(t, &cnt), "h2")
	if left, _ := h2.Grants(ctx, commands.GrantsRequest{Project: "p1"}); len(left) != 0 {
		t.Errorf("a fresh host sees grants %+v after the revocation", left)
	}
}

// askingHost is a host with the test tools and ask_human, a tool that
// awaits input and answers what it was asked and what the human answered.
func askingHost(t *testing.T) *commands.Host {
	t.Helper()
	s := steptest.Start(t, "")
	var cnt counter
	reg := executortest.Registry(t, &cnt)
	ask, err := executor.New("ask_human", "Ask the human a question and return the answers.",
		func(_ context.Context, c executor.Call, in executortest.TextInput) (string, error) {
			return "asked " + in.Text + ", answered " + string(c.Answers), nil
		}, executor.AwaitsInput())
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(ask); err != nil {
		t.Fatal(err)
	}
	return startHost(t, s, reg, "h1")
}
