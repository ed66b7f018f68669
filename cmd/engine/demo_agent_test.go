package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// engine demo --agent: engine agent, as its own processes of this binary,
// drives a run against the fake model server the demo serves; the bash
// call's ticket stops the first process, a second approves it, a third
// resumes the run and the model answers. The kept data then holds the
// run as the demo told it: completed, three turns, the ticket approved by
// the demo's operator, the model's file in the workspace.
func TestDemoAgent(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the demo's directory, kept, is the test's
	t.Setenv("OPENAI_API_KEY", "sk-demo-must-not-leak")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"demo", "--agent", "--keep"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo --agent: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"== Stepgate agent demo",
		"$ engine agent --data ",
		"--provider openai --base-url http://127.0.0.1:",
		"I will write hello.txt first.",
		"Created hello.txt (31 bytes)",
		"step 2 awaits a human:",
		"confirmation required by rule bash \"*\" (project config, narrows only)",
		"(the process exited with code 3: run ",
		"$ engine approve ",
		"--as demo-operator",
		"1 hello.txt",
		"$ engine agent --resume ",
		"resumed after 2 turns and 2 steps",
		`Done: write said "Created hello.txt (31 bytes)"; bash said "1 hello.txt".`,
		"ended: completed after 2 steps",
		"the fake model server answered 3 requests, one a turn",
		"$ engine show ",
		"(permission): once by demo-operator",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo --agent output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+stderr.String(), "sk-demo-must-not-leak") {
		t.Error("the user's OPENAI_API_KEY reached the demo's output")
	}
	m := regexp.MustCompile(`data and workspace kept in (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no kept directory in:\n%s", out)
	}
	dir := m[1]
	body, err := os.ReadFile(filepath.Join(dir, "workspace", "hello.txt"))
	if err != nil || string(body) != "Hello from a model-driven run.\n" {
		t.Errorf("hello.txt = %q, %v", body, err)
	}
	runID := demoRunRE.FindStringSubmatch(out)
	if runID == nil {
		t.Fatal("no run id in the output")
	}
	ctx := context.Background()
	e, err := startEmbedded(ctx, hosting.Options{DataDir: filepath.Join(dir, "data"), HostName: "check", Log: logger(&stderr)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Host.Show(ctx, commands.ShowRequest{Run: runID[1]})
	if err != nil {
		t.Fatal(err)
	}
	if r.End == nil || r.End.Cause != events.CauseCompleted {
		t.Errorf("run end %+v, want completed", r.End)
	}
	if len(r.Turns) != 3 || len(r.Steps) != 2 {
		t.Errorf("%d turns and %d steps, want 3 and 2", len(r.Turns), len(r.Steps))
	}
	if r.Snapshot.Model == nil || r.Snapshot.Model.Provider != "openai" || r.Snapshot.Model.Task != demoAgentTask {
		t.Errorf("pinned settings %+v", r.Snapshot.Model)
	}
	if len(r.Tickets) != 1 || r.Tickets[0].Tool != "bash" || r.Tickets[0].Resolution == nil ||
		!r.Tickets[0].Resolution.Approved || r.Tickets[0].Resolution.Principal != "demo-operator" {
		t.Errorf("tickets %+v, want bash's approved by demo-operator", r.Tickets)
	}
}
