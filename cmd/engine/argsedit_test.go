package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
)

// `engine approve TICKET --args JSON` through the service: an edit the
// rules deny is refused (exit 1, the reason printed, the ticket pending),
// arguments that are not JSON are a usage error, and an edit that
// validates runs the edited call; show and audit print both argument sets.
func TestApproveWithArgsVerb(t *testing.T) {
	s := serveForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loc := t.TempDir()
	info, err := s.c.StartRun(ctx, commands.StartRunRequest{Location: loc, Project: "p1", Rules: []gate.Rule{
		{Action: "edit", Resource: "*", Effect: gate.Ask}, {Action: "edit", Resource: "secret/*", Effect: gate.Deny}}})
	if err != nil {
		t.Fatal(err)
	}
	model := `{"path":"notes/a.txt","content":"model's"}`
	out, err := s.c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c", Tool: "write", Args: json.RawMessage(model)}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("submit: %+v %v, want one ticket", out, err)
	}
	ticket := out.Tickets[0].ID

	_, err = engineVerb(t, "approve", ticket, "--nats", s.url, "--as", "ops-1", "--args", `{"path":"secret/k.txt","content":"x"}`)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "edited arguments refused") || !strings.Contains(err.Error(), `denied by rule edit "secret/*"`) {
		t.Fatalf("approve --args with a denied edit: %v (exit %d), want exit 1 naming the rule", err, exitCode(err))
	}
	t.Logf("denied: %v", err)
	if _, err := engineVerb(t, "approve", ticket, "--nats", s.url, "--args", `{"path":`); exitCode(err) != 2 {
		t.Errorf("approve --args with what is not JSON: %v, want a usage error", err)
	}
	if listed, err := engineVerb(t, "tickets", "--nats", s.url); err != nil || !strings.Contains(listed, ticket) {
		t.Fatalf("tickets after the refused edit: %q %v, want the ticket pending", listed, err)
	}

	edited := `{"path":"notes/a.txt","content":"the approver's"}`
	got, err := engineVerb(t, "approve", ticket, "--nats", s.url, "--as", "ops-1", "--args", edited)
	if err != nil || !strings.Contains(got, "approved with edited arguments") || !strings.Contains(got, "The user changed the arguments of this call") {
		t.Fatalf("approve --args: %q %v", got, err)
	}
	t.Logf("approve --args printed:\n%s", got)
	if b, err := os.ReadFile(filepath.Join(loc, "notes/a.txt")); err != nil || string(b) != "the approver's" {
		t.Errorf("notes/a.txt = %q %v, want the edited content", b, err)
	}
	shown, err := engineVerb(t, "show", info.Run, "--nats", s.url, "--color", "never")
	if err != nil || !strings.Contains(shown, "arguments edited to "+edited) || !strings.Contains(shown, "(the model's: "+model+")") {
		t.Errorf("show: %v\n%s\nwant both argument sets", err, shown)
	}
	rows := auditRows(t, "--nats", s.url)
	found := false
	for _, r := range rows {
		if r.Ticket == ticket {
			found = string(r.OriginalArgs) == model && string(r.EditedArgs) == edited
		}
	}
	if !found {
		t.Errorf("audit rows %+v: want the ticket's row with both argument sets", rows)
	}
}
