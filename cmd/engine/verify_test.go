package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// engine verify checks every run's chain: a write lost in the middle of a
// run's history (a message deleted from the stream) makes the rebuild mark
// the run diverged; verify names the run and why, and fails.
func TestVerifyReportsABrokenChain(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c1","tool":"echo","args":{"text":"a"}}]}
{"calls":[{"id":"c2","tool":"echo_fx","args":{"text":"b"}}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"run", "--data", data, "--script", script, "--location", ws}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	e, err := startEmbedded(ctx, hostOptions{dataDir: data, hostName: "test", log: logger(&stderr)})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := e.host.Proj.Runs()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v: %v", runs, err)
	}
	id := runs[0].ID
	stored, err := e.host.Log.ReadRun(ctx, id, 0)
	if err != nil || len(stored) < 4 {
		t.Fatalf("run %s: %d commits: %v", id, len(stored), err)
	}
	js, err := jetstream.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, e.host.Log.Name())
	if err != nil {
		t.Fatal(err)
	}
	lost := stored[len(stored)-3] // a commit with two after it
	if err := stream.DeleteMsg(ctx, lost.Seq); err != nil {
		t.Fatal(err)
	}
	if err := e.close(); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	err = run(ctx, []string{"verify", "--data", data}, &stdout, &stderr)
	t.Logf("engine verify: %v\n%s", err, stdout.String())
	if err == nil || !strings.Contains(stdout.String(), "run "+id+" diverged: commit "+stored[len(stored)-2].Commit.ID) ||
		!strings.Contains(stdout.String(), "1 runs diverged") {
		t.Errorf("verify after stream sequence %d was deleted: %v\n%s", lost.Seq, err, stdout.String())
	}
}
