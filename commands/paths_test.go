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

// An external_directory approval is for the directory the approver was
// shown. When it is replaced by a symlink to another place between the
// ticket and the approval, read, write and grep are refused with "Path
// changed after permission approval: <path>" and the other place is left
// alone — also when the approval is handled by a host that never saw the
// decision (the real paths travel in the decide commit). A directory left
// as it was is acted on as approved.
func TestExternalApprovalHoldsToTheDirectoryApproved(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	h1 := startHost(t, s, reg, "h1")
	h2 := startHost(t, s, reg, "h2")
	ctx := ctxT(t)
	info, err := h1.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "external_directory", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	type dirs struct{ ext, other string }
	tests := []struct {
		why     string
		tool    string
		args    func(d dirs) any
		swap    bool
		want    func(d dirs) string
		isError bool
	}{
		{"read, swapped", "read", func(d dirs) any { return builtin.ReadInput{Path: filepath.Join(d.ext, "f.txt")} }, true,
			func(d dirs) string { return "Path changed after permission approval: " + filepath.Join(d.ext, "f.txt") }, true},
		{"write, swapped", "write", func(d dirs) any { return builtin.WriteInput{Path: filepath.Join(d.ext, "new.txt"), Content: "agent"} }, true,
			func(d dirs) string {
				return "Path changed after permission approval: " + filepath.Join(d.ext, "new.txt")
			}, true},
		{"grep, swapped", "grep", func(d dirs) any { return builtin.GrepInput{Pattern: "secret", Path: d.ext} }, true,
			func(d dirs) string { return "Path changed after permission approval: " + d.ext }, true},
		{"read, unchanged", "read", func(d dirs) any { return builtin.ReadInput{Path: filepath.Join(d.ext, "f.txt")} }, false,
			func(dirs) string { return "     1\tapproved secret\n(end of file: 1 lines)" }, false},
		{"write, unchanged", "write", func(d dirs) any { return builtin.WriteInput{Path: filepath.Join(d.ext, "new.txt"), Content: "agent"} }, false,
			func(d dirs) string { return "Created " + filepath.Join(d.ext, "new.txt") + " (5 bytes)" }, false},
		{"grep, unchanged", "grep", func(d dirs) any { return builtin.GrepInput{Pattern: "secret", Path: d.ext} }, false,
			func(d dirs) string { return filepath.Join(d.ext, "f.txt") + ":1: approved secret" }, false},
	}
	for i, tc := range tests {
		base := t.TempDir()
		d := dirs{ext: filepath.Join(base, "ext"), other: filepath.Join(base, "other")}
		writeTreeAt(t, d.ext, "f.txt", "approved secret\n")
		writeTreeAt(t, d.other, "f.txt", "other secret\n")
		out, err := h1.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []commands.CallRequest{call("c", tc.tool, tc.args(d))}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Tickets) != 1 || out.Tickets[0].Requests[0].Action != "external_directory" {
			t.Fatalf("%s: tickets %+v, want one asking external_directory", tc.why, out.Tickets)
		}
		if tc.swap {
			if err := os.Rename(d.ext, d.ext+".approved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(d.other, d.ext); err != nil {
				t.Fatal(err)
			}
		}
		caughtUp(t, h1, h2)
		res, err := h2.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Outcome.Results[0]
		if got.Content != tc.want(d) || got.IsError != tc.isError {
			t.Errorf("%s: the model read %q (error %v), want %q (error %v)", tc.why, got.Content, got.IsError, tc.want(d), tc.isError)
		}
		if b, err := os.ReadFile(filepath.Join(d.other, "f.txt")); err != nil || string(b) != "other secret\n" {
			t.Errorf("%s: the other place's file holds %q (%v)", tc.why, b, err)
		}
		if _, err := os.Stat(filepath.Join(d.other, "new.txt")); err == nil {
			t.Errorf("%s: a file was written in the other place", tc.why)
		}
		caughtUp(t, h2, h1)
	}
	run, err := h1.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range run.Steps {
		d := st.Calls[0].Decision
		if d == nil || len(d.Paths) == 0 || !strings.HasSuffix(d.Paths[0].Real, "ext") && !strings.Contains(d.Paths[0].Real, "ext/") {
			t.Errorf("step %d: verdict %+v records no real path of the approved directory", st.N, d)
		}
	}
}

// writeTreeAt writes one file under dir, creating dir.
func writeTreeAt(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
