package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// engine fork --data copies a run's first steps into a new run (the
// results the model read, not run again), prints it, and refuses a step
// past the run's last with exit status 1.
func TestForkVerb(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c1","tool":"echo","args":{"text":"a"}}]}
{"calls":[{"id":"c2","tool":"echo_fx","args":{"text":"b"}}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx := context.Background()
	if err := run(ctx, []string{"run", "--data", data, "--test-tools", "--script", script, "--location", ws}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	list := func() []commands.RunSummary {
		t.Helper()
		stdout.Reset()
		if err := run(ctx, []string{"runs", "--data", data, "--json"}, &stdout, &stderr); err != nil {
			t.Fatalf("runs: %v\n%s", err, stderr.String())
		}
		var rs []commands.RunSummary
		if err := json.Unmarshal(stdout.Bytes(), &rs); err != nil {
			t.Fatalf("runs --json %q: %v", stdout.String(), err)
		}
		return rs
	}
	src := list()[0].ID

	stdout.Reset()
	if err := run(ctx, []string{"fork", src, "--at", "1", "--data", data}, &stdout, &stderr); err != nil {
		t.Fatalf("fork: %v\n%s", err, stderr.String())
	}
	t.Logf("engine fork: %s", stdout.String())
	if want := "forked from " + src + " at step 1"; !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "its next step is 2") {
		t.Errorf("engine fork printed %q, want %q and the next step", stdout.String(), want)
	}
	stdout.Reset()
	if err := run(ctx, []string{"fork", "--json", "--data", data, "--at", "2", src}, &stdout, &stderr); err != nil {
		t.Fatalf("fork --json: %v\n%s", err, stderr.String())
	}
	var res sgclient.ForkResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Steps != 2 || res.ForkedFrom.Run != src {
		t.Fatalf("fork --json %q: %+v, %v", stdout.String(), res, err)
	}
	stdout.Reset()
	if err := run(ctx, []string{"show", res.Run, "--data", data, "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("show: %v\n%s", err, stderr.String())
	}
	var shown sgclient.Run
	if err := json.Unmarshal(stdout.Bytes(), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown.Steps) != 2 || shown.Snapshot.ForkedFrom == nil || shown.Steps[1].Calls[0].Result == nil ||
		len(shown.Steps[1].Calls[0].Result.Parts) == 0 || shown.Steps[1].Calls[0].Result.Parts[0].Text != "b" {
		t.Errorf("the fork shows %d steps, forked_from %v: %s", len(shown.Steps), shown.Snapshot.ForkedFrom, stdout.String())
	}
	if n := len(list()); n != 3 {
		t.Errorf("%d runs after two forks, want 3", n)
	}

	stderr.Reset()
	err := run(ctx, []string{"fork", src, "--at", "3", "--data", data}, &stdout, &stderr)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "cannot fork at step 3") {
		t.Errorf("fork past the last step: %v (exit %d), want exit 1 and the reason", err, exitCode(err))
	}
	if err := run(ctx, []string{"fork", src}, &stdout, &stderr); err == nil || exitCode(err) != 2 {
		t.Errorf("fork without --at: %v, want a usage error", err)
	}
}
