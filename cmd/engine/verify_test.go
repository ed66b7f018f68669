package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/projection"
	bolt "go.etcd.io/bbolt"
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
	if err := run(ctx, []string{"run", "--data", data, "--test-tools", "--script", script, "--location", ws}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	e, err := startEmbedded(ctx, hosting.Options{DataDir: data, HostName: "test", TestTools: true, Log: logger(&stderr)})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := e.Host.Proj.Runs()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v: %v", runs, err)
	}
	id := runs[0].ID
	stored, err := e.Host.Log.ReadRun(ctx, id, 0)
	if err != nil || len(stored) < 4 {
		t.Fatalf("run %s: %d commits: %v", id, len(stored), err)
	}
	js, err := jetstream.New(e.Conn)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, e.Host.Log.Name())
	if err != nil {
		t.Fatal(err)
	}
	lost := stored[len(stored)-3] // a commit with two after it
	if err := stream.DeleteMsg(ctx, lost.Seq); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
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

// engine verify compares every projection, not the runs only: a checkpoint
// whose saved grants or registry disagree with the log (here a revoked
// grant checkpointed as in force, and a scope the log never registered)
// makes verify fail and name each projection that differs.
func TestVerifyNamesTheGrantsAndTheRegistryThatDiffer(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	e, err := startEmbedded(ctx, hosting.Options{DataDir: data, HostName: "test", TestTools: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_, grant := grantRun(t, ctx, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"verify", "--data", data}, &stdout, &stderr); err != nil {
		t.Fatalf("verify before the checkpoint was changed: %v\n%s", err, stdout.String())
	}
	db, err := bolt.Open(filepath.Join(data, "state", "projections.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		g := new(projection.Grant)
		if err := json.Unmarshal(tx.Bucket([]byte("grants")).Get([]byte(grant)), g); err != nil {
			return err
		}
		if g.Revoked == nil {
			return fmt.Errorf("grant %s is not revoked in the checkpoint", grant)
		}
		g.Revoked = nil // in force again, for whoever reads the checkpoint
		v, err := json.Marshal(g)
		if err != nil {
			return err
		}
		if err := tx.Bucket([]byte("grants")).Put([]byte(grant), v); err != nil {
			return err
		}
		return tx.Bucket([]byte("registry")).Put([]byte("forged"), []byte(`{"registrations":[{"scope":"forged","name":"bash","seq":1}]}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	err = run(ctx, []string{"verify", "--data", data}, &stdout, &stderr)
	t.Logf("engine verify: %v\n%s", err, stdout.String())
	if err == nil || !strings.Contains(err.Error(), "the registry's scopes and the saved grants differ") {
		t.Fatalf("verify of a changed checkpoint: %v, want the registry and the grants named", err)
	}
	out := stdout.String()
	for _, want := range []string{"the saved grants differ from a rebuild", "the registry's scopes differ from a rebuild", `"forged"`, "Revoked"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify's report lacks %q", want)
		}
	}
	if strings.Contains(out, "the runs differ") {
		t.Errorf("verify names the runs, which do not differ")
	}
}
