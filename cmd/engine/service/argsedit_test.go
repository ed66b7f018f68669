package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/gate"
)

// Over the service, with the Go client: an edit the run's rules deny is
// refused with edit_refused and the ticket still waits; an edit that
// validates runs exactly the edited call, and show returns both argument
// sets from the log.
func TestReplyWithEditedArgsOverTheService(t *testing.T) {
	e, err := servicetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	loc := t.TempDir()
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc, Project: "p1", Rules: []gate.Rule{
		{Action: "edit", Resource: "*", Effect: gate.Ask}, {Action: "edit", Resource: "secret/*", Effect: gate.Deny}}})
	if err != nil {
		t.Fatal(err)
	}
	model := json.RawMessage(`{"path":"notes/a.txt","content":"model's"}`)
	out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []client.CallRequest{{ID: "c", Tool: "write", Args: model}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("submit: %+v %v, want one ticket", out, err)
	}
	ticket := out.Tickets[0].ID
	_, err = c.Reply(ctx, client.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops-1",
		Args: json.RawMessage(`{"path":"secret/k.txt","content":"x"}`)})
	if !errors.Is(err, client.ErrEditRefused) || client.Code(err) != client.CodeEditRefused || !strings.Contains(err.Error(), `denied by rule edit "secret/*"`) {
		t.Fatalf("denied edit over the service: %v (code %q), want edit_refused naming the rule", err, client.Code(err))
	}
	t.Logf("denied edit: %v", err)
	if page, err := c.Tickets(ctx, client.TicketsRequest{Ticket: ticket}); err != nil || len(page.Tickets) != 1 {
		t.Fatalf("the ticket after a refused edit: %+v %v, want it pending", page, err)
	}
	_, err = c.Reply(ctx, client.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops-1", Args: json.RawMessage(`{"path":"notes/a.txt"}`)})
	if !errors.Is(err, client.ErrEditRefused) {
		t.Fatalf("an edit failing the schema over the service: %v, want edit_refused", err)
	}
	t.Logf("schema: %v", err)
	edited := json.RawMessage(`{"path":"notes/a.txt","content":"the approver's"}`)
	res, err := c.Reply(ctx, client.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops-1", Args: edited})
	if err != nil || !res.Approved || res.Outcome == nil {
		t.Fatalf("edited approval over the service: %+v %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(loc, "notes/a.txt")); err != nil || string(b) != "the approver's" {
		t.Errorf("notes/a.txt = %q %v, want the edited content", b, err)
	}
	if got := res.Outcome.Results[0].Content; !strings.HasPrefix(got, "The user changed the arguments of this call before approving it") {
		t.Errorf("the model's result %q, want it to say the arguments were changed", got)
	}
	r, err := c.Show(ctx, client.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	tk := r.Ticket(ticket)
	if tk == nil || tk.Resolution == nil || tk.Resolution.Edit == nil {
		t.Fatalf("show: ticket %+v, want its resolution with the edit", tk)
	}
	if string(tk.Resolution.Edit.Original) != string(model) || string(tk.Resolution.Edit.Args) != string(edited) {
		t.Errorf("show: original %s, edited %s", tk.Resolution.Edit.Original, tk.Resolution.Edit.Args)
	}
}
