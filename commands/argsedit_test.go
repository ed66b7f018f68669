package commands_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// editRules make every write ask, but those under secret/ (denied) and
// free/ (allowed).
const editRules = "agents:\n  build:\n    permission:\n      edit: { \"*\": ask, \"secret/*\": deny, \"free/*\": allow }\n"

// writeArgs are write's arguments.
func writeArgs(path, content string) json.RawMessage {
	b, _ := json.Marshal(builtin.WriteInput{Path: path, Content: content})
	return b
}

// editTicket starts a run in loc of project whose first step writes
// notes/a.txt, and returns the run and the ticket it waits on.
func editTicket(t *testing.T, h *commands.Host, loc, project string) (string, string) {
	t.Helper()
	run := startIn(t, h, loc, project)
	out := submit(t, h, run, 1, commands.CallRequest{ID: "c", Tool: "write", Args: writeArgs("notes/a.txt", "model's")})
	if len(out.Tickets) != 1 {
		t.Fatalf("the write: %+v, want one ticket", out.Results)
	}
	return run, out.Tickets[0].ID
}

// resolution reads the run's resolve commit back from the log and returns
// its TicketResolved.
func resolution(t *testing.T, h *commands.Host, run string) events.TicketResolved {
	t.Helper()
	stored, err := h.Log.ReadRun(ctxT(t), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stored {
		if s.Commit == nil || s.Commit.Kind != events.KindResolve {
			continue
		}
		for _, e := range s.Commit.Events {
			if r, ok := e.(events.TicketResolved); ok {
				return r
			}
		}
	}
	t.Fatal("no TicketResolved in a resolve commit of the run")
	return events.TicketResolved{}
}

// An edit the rules deny, one that newly asks (another file, a protected
// path), one that fails the tool's schema, and args with a reply that is
// no approval are refused with their reason: nothing is written or
// committed, and the ticket still waits.
func TestEditThatWidensIsRefusedAndTheTicketWaits(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, editRules)
	ctx := ctxT(t)
	loc := protectedLoc(t)
	run, ticket := editTicket(t, h, loc, "p1")
	before, err := h.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what, reply string
		args        json.RawMessage
		want        error
		reason      string
		file        string
	}{
		{"an edit the rules deny", "once", writeArgs("secret/k.txt", "x"), commands.ErrEditRefused, `denied by rule edit "secret/*"`, "secret/k.txt"},
		{"an edit the rules deny, with always", "always", writeArgs("secret/k.txt", "x"), commands.ErrEditRefused, `denied by rule edit "secret/*"`, "secret/k.txt"},
		{"an edit onto another file that asks", "once", writeArgs("notes/b.txt", "x"), commands.ErrEditRefused, "the ticket did not ask for it", "notes/b.txt"},
		{"an edit onto a protected path", "once", writeArgs(".git/config", "x"), commands.ErrEditRefused, "protected", ".git/config"},
		{"an edit onto a protected path, with always", "always", writeArgs(".git/hooks/pre-commit", "x"), commands.ErrEditRefused, "protected", ".git/hooks/pre-commit"},
		{"an edit without the required path", "once", json.RawMessage(`{"content":"x"}`), commands.ErrEditRefused, "path", ""},
		{"an edit whose path is a number", "once", json.RawMessage(`{"path":5,"content":"x"}`), commands.ErrEditRefused, "path", ""},
		{"an edit with a field the schema has not", "once", json.RawMessage(`{"path":"notes/a.txt","content":"x","mode":"0777"}`), commands.ErrEditRefused, "mode", ""},
		{"edited arguments that are not JSON", "once", json.RawMessage(`{"path":`), commands.ErrEditRefused, "", ""},
		{"an edit too large to record beside the model's arguments", "once", writeArgs("notes/a.txt", strings.Repeat("x", 4<<20)), commands.ErrEditRefused, "more than the", ""},
		{"edited arguments with a reject", "reject", writeArgs("notes/a.txt", "x"), commands.ErrInvalidRequest, "once or always", ""},
	} {
		_, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: tc.reply, Args: tc.args, Principal: "ops-1", Message: "m"})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v, want %v naming %q", tc.what, err, tc.want, tc.reason)
		}
		t.Logf("%s: %.300v (%s)", tc.what, err, commands.Code(err))
		if tc.file != "" && readAt(t, loc, tc.file) == "x" {
			t.Errorf("%s: %s was written", tc.what, tc.file)
		}
	}
	if got := commands.Code(commands.ErrEditRefused); got != "edit_refused" {
		t.Errorf("code %q, want edit_refused", got)
	}
	after, err := h.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("refused edits committed %d commits", len(after)-len(before))
	}
	if st := status(t, h, run); st != projection.StatusAwaiting {
		t.Errorf("run %s after refused edits, want awaiting", st)
	}
	page, err := tickets(ctx, h, commands.TicketsRequest{Ticket: ticket})
	if err != nil || len(page) != 1 {
		t.Fatalf("the ticket after refused edits: %v %v, want it pending", page, err)
	}
	if readAt(t, loc, "notes/a.txt") != "" {
		t.Error("the model's write ran")
	}
	// The ticket still takes a plain approval.
	if res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops-1"}); err != nil || !res.Approved {
		t.Fatalf("approval after refused edits: %+v %v", res, err)
	}
	if got := readAt(t, loc, "notes/a.txt"); got != "model's" {
		t.Errorf("notes/a.txt = %q after the plain approval", got)
	}
}

// An edit that validates runs exactly the edited call: the file holds the
// edited content (and an edit may move the write to a file the rules
// allow); the model's result says so; the resolve commit holds both
// argument sets, the edited call's requests and its paths.
func TestEditRunsTheEditedCallAndIsRecorded(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, editRules)
	ctx := ctxT(t)
	for _, tc := range []struct {
		what, path string
	}{
		{"the same file, other content", "notes/a.txt"},
		{"a file the rules allow", "free/c.txt"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			loc := protectedLoc(t)
			run, ticket := editTicket(t, h, loc, "p1")
			edited := writeArgs(tc.path, "the approver's")
			res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Args: edited, Principal: "ops-1"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Approved || res.Outcome == nil || res.Outcome.Results[0].IsError {
				t.Fatalf("edited approval: %+v", res)
			}
			if got := readAt(t, loc, tc.path); got != "the approver's" {
				t.Errorf("%s = %q, want the edited content", tc.path, got)
			}
			if tc.path != "notes/a.txt" && readAt(t, loc, "notes/a.txt") != "" {
				t.Error("the model's file was written too")
			}
			content := res.Outcome.Results[0].Content
			if want := commands.EditedNote(edited); !strings.HasPrefix(content, want+"\n") {
				t.Errorf("result %q, want it to start with %q", content, want)
			}
			t.Logf("result: %s", content)
			r := resolution(t, h, run)
			if r.Edit == nil {
				t.Fatalf("resolve commit: %+v, want an edit", r)
			}
			if string(r.Edit.Original) != string(writeArgs("notes/a.txt", "model's")) || string(r.Edit.Args) != string(edited) {
				t.Errorf("recorded args: original %s edited %s", r.Edit.Original, r.Edit.Args)
			}
			if r.Principal != "ops-1" || !r.Approved || len(r.Edit.Requests) == 0 || len(r.Edit.Paths) == 0 || r.Edit.ArgsSHA == "" {
				t.Errorf("recorded resolution %+v edit %+v", r, r.Edit)
			}
			if r.Edit.Requests[len(r.Edit.Requests)-1].Resources[0] != tc.path {
				t.Errorf("recorded requests %+v, want the edited call's", r.Edit.Requests)
			}
		})
	}
}

// "always" with edited arguments saves the edited call's save patterns,
// and may move the write within what the ticket's patterns cover (write
// saves "edit *"); a protected path is still refused.
func TestEditWithAlwaysSavesTheEditedCallsGrants(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, editRules)
	ctx := ctxT(t)
	loc := protectedLoc(t)
	_, ticket := editTicket(t, h, loc, "p1")
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Args: writeArgs("notes/b.txt", "x"), Principal: "ops-1"}); !errors.Is(err, commands.ErrEditRefused) {
		t.Fatalf("once onto another file: %v, want edit_refused", err)
	}
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "always", Args: writeArgs("notes/b.txt", "x"), Principal: "ops-1"})
	if err != nil || !res.Approved {
		t.Fatalf("always onto another file: %+v %v", res, err)
	}
	if readAt(t, loc, "notes/b.txt") != "x" || readAt(t, loc, "notes/a.txt") != "" {
		t.Errorf("after always with the edit: b=%q a=%q", readAt(t, loc, "notes/b.txt"), readAt(t, loc, "notes/a.txt"))
	}
	grants, err := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if err != nil || len(grants) != 1 || grants[0].Action != "edit" || grants[0].Resource != "*" || grants[0].Ticket != ticket {
		t.Errorf("grants %+v %v, want edit * of the ticket", grants, err)
	}
}

// A host that stopped between the resolve commit of an edited approval and
// its settle runs the edited call when it recovers, never the model's, held
// to the paths the edited call resolved to at the reply: the log up to the
// resolve commit, copied to another server, is what such a host leaves,
// and a host of the same name recovers from it.
func TestRecoveryRunsTheEditedCall(t *testing.T) {
	t.Run("the edited read runs", func(t *testing.T) {
		got := recoverEdited(t, nil)
		if !strings.Contains(got, "the approver's file") || strings.Contains(got, "the model's file") || !strings.HasPrefix(got, commands.EditedNote(json.RawMessage(`{"path":"b.txt"}`))) {
			t.Errorf("recovered result %q, want the edited read with the note", got)
		}
		t.Logf("recovered result: %s", got)
	})
	t.Run("the edited path moved meanwhile", func(t *testing.T) {
		got := recoverEdited(t, func(loc string) {
			if err := os.Remove(filepath.Join(loc, "b.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("other.txt", filepath.Join(loc, "b.txt")); err != nil {
				t.Fatal(err)
			}
		})
		if !strings.Contains(got, executor.ErrPathChanged.Error()) || strings.Contains(got, "another file") {
			t.Errorf("recovered result %q, want the edited read refused: its path changed", got)
		}
		t.Logf("recovered result: %s", got)
	})
}

// recoverEdited approves a read of a.txt edited to b.txt (a symlink to
// real.txt), leaves the log as
// a host that stopped after the resolve commit would, calls between (if
// set) on the location, recovers and returns the call's result text.
func recoverEdited(t *testing.T, between func(loc string)) string {
	const rules = "agents:\n  build:\n    permission:\n      read: { \"*\": allow, \"a.txt\": ask }\n"
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, rules)
	ctx := ctxT(t)
	loc := t.TempDir()
	writeAt(t, loc, "a.txt", "the model's file\n")
	writeAt(t, loc, "real.txt", "the approver's file\n")
	writeAt(t, loc, "other.txt", "another file\n")
	if err := os.Symlink("real.txt", filepath.Join(loc, "b.txt")); err != nil {
		t.Fatal(err)
	}
	run := startIn(t, h, loc, "p1")
	out := submit(t, h, run, 1, call("c", "read", builtin.ReadInput{Path: "a.txt"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("the read: %+v, want one ticket", out.Results)
	}
	edited := json.RawMessage(`{"path":"b.txt"}`)
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Args: edited, Principal: "ops-1"}); err != nil {
		t.Fatal(err)
	}
	s2, _, _ := copiedUntilResolve(t, h, run) // the host stopped there: the call was cleared to run, and has no result
	if between != nil {
		between(loc)
	}
	h2, _ := loaderHost(t, s2, rules)
	if err := h2.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := h2.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	s1 := r.Step(1)
	if s1 == nil || !s1.Final || s1.Calls[0].Result == nil {
		t.Fatalf("after recovery: step %+v, want it final", s1)
	}
	var text []string
	for _, p := range s1.Calls[0].Result.Parts {
		text = append(text, p.Text)
	}
	return strings.Join(text, "\n")
}

// A tool that awaits input waits on an input ticket, answered with
// answers: edited arguments do not go with an answer (invalid_input), nor
// approve it (ticket_kind); the ticket still takes its answers.
func TestEditOfAnInputTicketIsRefused(t *testing.T) {
	h := askingHost(t)
	ctx := ctxT(t)
	run := startIn(t, h, t.TempDir(), "p1")
	out := submit(t, h, run, 1, call("q", "ask_human", text{"which branch?"}))
	if len(out.Tickets) != 1 || out.Tickets[0].Kind != events.TicketInput {
		t.Fatalf("outcome %+v, want one input ticket", out)
	}
	id := out.Tickets[0].ID
	edited := json.RawMessage(`{"text":"which tag?"}`)
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: id, Reply: events.ReplyAnswer, Answers: json.RawMessage(`["main"]`), Args: edited, Principal: "ops-1"}); commands.Code(err) != commands.CodeInvalidInput {
		t.Errorf("answers with edited arguments: %v, want invalid_input", err)
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: id, Reply: events.ReplyOnce, Args: edited, Principal: "ops-1"}); commands.Code(err) != commands.CodeTicketKind {
		t.Errorf("an edited approval of an input ticket: %v, want ticket_kind", err)
	}
	res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: id, Reply: events.ReplyAnswer, Answers: json.RawMessage(`["main"]`), Principal: "ops-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Outcome.Results[0].Content; got != `asked which branch?, answered ["main"]` {
		t.Errorf("result = %q, want the model's question answered", got)
	}
}
