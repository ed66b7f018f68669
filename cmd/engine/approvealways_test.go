package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
)

// askEdit starts a run in a new directory whose edits ask and submits an
// edit of notes.txt (an edit saves "*", the whole project): its run, ticket
// and project.
func askEdit(t *testing.T, ctx context.Context, c *client) (run, ticket, project string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := c.StartRun(ctx, commands.StartRunRequest{Location: dir, Rules: []gate.Rule{{Action: "edit", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": "notes.txt", "oldString": "hello", "newString": "hello there"})
	out, err := c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{{ID: "c1", Tool: "edit", Args: args}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("step 1 = %+v, %v; want one ticket", out, err)
	}
	return info.Run, out.Tickets[0].ID, out.Tickets[0].Project
}

// `engine approve --always` prints the grant it saved; --pattern narrows
// it, and the engine refuses a pattern wider than the ticket's save pattern
// or one the call's resources do not match (the ticket still waits), and
// --pattern without --always.
func TestApproveAlwaysPattern(t *testing.T) {
	s := serveForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	approve := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"approve", "--nats", s.url, "--as", "ops"}, args...), &out, io.Discard)
		return out.String(), err
	}
	_, bashTicket := askStep(t, ctx, s.c) // saves exactly "echo released"
	if _, err := approve(bashTicket, "--always", "--pattern", "echo *"); !errors.Is(err, sgclient.ErrInvalidRequest) || !strings.Contains(err.Error(), `"echo *" is not narrower than the ticket's save pattern "echo released"`) {
		t.Errorf("a wider pattern: %v, want invalid_input, not narrower", err)
	}
	_, editTicket, project := askEdit(t, ctx, s.c)
	if _, err := approve(editTicket, "--always", "--pattern", "notes.md"); !errors.Is(err, sgclient.ErrInvalidRequest) || !strings.Contains(err.Error(), `does not match notes.txt`) {
		t.Errorf("a pattern the call does not match: %v, want invalid_input", err)
	}
	if _, err := approve(editTicket, "--pattern", "notes*"); exitCode(err) != 2 {
		t.Errorf("--pattern without --always: %v, want a usage error", err)
	}
	if gs, err := s.c.Grants(ctx, commands.GrantsRequest{Project: project}); err != nil || len(gs) != 0 {
		t.Fatalf("grants after the refusals = %+v %v, want none", gs, err)
	}
	out, err := approve(editTicket, "--always", "--pattern", "notes*")
	if err != nil || !strings.Contains(out, `: edit "notes*" for project `+project) {
		t.Fatalf("approve --always --pattern notes*: %q %v, want the saved grant printed", out, err)
	}
	// The grant is saved by the reply's commit; the grants list is the
	// projection's, which a loaded machine may apply a moment later.
	var gs []sgclient.Grant
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if gs, err = s.c.Grants(ctx, commands.GrantsRequest{Project: project}); err != nil || len(gs) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(gs) != 1 || gs[0].Action != "edit" || gs[0].Resource != "notes*" {
		t.Fatalf("grants = %+v %v, want edit notes*", gs, err)
	}
	// Without --pattern the ticket's own save pattern, printed.
	_, other, project2 := askEdit(t, ctx, s.c)
	if out, err := approve(other, "--always"); err != nil || !strings.Contains(out, `: edit "*" for project `+project2) {
		t.Errorf("approve --always: %q %v, want the grant edit \"*\" printed", out, err)
	}
}
