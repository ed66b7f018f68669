package commands_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// An edit waiting for a human edits only the content the human was shown:
// the digest seen at decision time is in the log, and a file changed before
// the approval is left alone, with the model told to read it again — also
// when the approval is handled by a host that never saw the decision.
func TestEditComparesWithWhatWasApproved(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h1 := startHost(t, s, reg, "h1")
	h2 := startHost(t, s, reg, "h2")
	ctx := ctxT(t)
	loc := t.TempDir()
	file := filepath.Join(loc, "main.go")
	writeFile := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("package main\n\nconst v = 1\n")
	info, err := h1.StartRun(ctx, commands.StartRunRequest{Location: loc,
		Rules: []gate.Rule{{Action: "edit", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	edit := builtin.EditInput{Path: "main.go", OldString: "v = 1", NewString: "v = 2"}
	for i, tc := range []struct {
		why       string
		meanwhile string // the file's content written before the approval; "" leaves it
		want      string
		isError   bool
		after     string
	}{
		{"a file changed before the approval", "package main\n\nconst v = 1 // touched\n", string(builtin.EditChanged), true, "package main\n\nconst v = 1 // touched\n"},
		{"an unchanged file", "", "Edited main.go: 1 replacement", false, "package main\n\nconst v = 2 // touched\n"},
	} {
		out, err := h1.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: i + 1, Calls: []commands.CallRequest{call("e", "edit", edit)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Tickets) != 1 {
			t.Fatalf("%s: %d tickets, want the edit to ask", tc.why, len(out.Tickets))
		}
		if tc.meanwhile != "" {
			writeFile(tc.meanwhile)
		}
		caughtUp(t, h1, h2)
		res, err := h2.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Outcome.Results[0]
		if got.Content != tc.want || got.IsError != tc.isError {
			t.Errorf("%s: the model read %q (error %v), want %q (error %v)", tc.why, got.Content, got.IsError, tc.want, tc.isError)
		}
		if b, _ := os.ReadFile(file); string(b) != tc.after {
			t.Errorf("%s: the file holds %q, want %q", tc.why, b, tc.after)
		}
		caughtUp(t, h2, h1)
	}
	run, err := h1.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range run.Steps {
		if d := st.Calls[0].Decision; d == nil || !strings.HasPrefix(d.Observed, "sha256:") {
			t.Errorf("step %d: verdict %+v records no digest", st.N, d)
		}
	}
}
