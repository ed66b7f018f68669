package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// recordBashRun drives a real engine on a data directory: one run of the
// build agent whose project file allows every bash command, with five bash
// calls over four steps, two of them rm. It returns the data directory and
// the project file's text.
func recordBashRun(t *testing.T) (data, projectFile string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user file
	data, ws := t.TempDir(), t.TempDir()
	projectFile = "agents:\n  build:\n    permission:\n      bash: { \"*\": allow }\n"
	if err := os.MkdirAll(filepath.Join(ws, ".stepgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".stepgate", "config.yaml"), []byte(projectFile), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c1","tool":"bash","args":{"command":"echo hi"}}]}
{"calls":[{"id":"c2","tool":"bash","args":{"command":"rm -f gone.txt"}},{"id":"c3","tool":"bash","args":{"command":"ls"}}]}
{"calls":[{"id":"c4","tool":"bash","args":{"command":"rm -rf nothing-here"}}]}
{"calls":[{"id":"c5","tool":"bash","args":{"command":"git --version"}}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", "--data", data, "--script", script, "--location", ws}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return data, projectFile
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A recorded run whose bash calls were all allowed, backtested against a
// configuration that also denies `rm *`, reports exactly the two rm calls
// (allow → block, naming the new deny rule and its source) and exits 1; the
// configuration the run had reports nothing and exits 0, with --data and
// with --nats.
func TestReplayBacktest(t *testing.T) {
	data, had := recordBashRun(t)
	ctx := context.Background()
	deny := writeFile(t, "agents:\n  build:\n    permission:\n      bash: { \"*\": allow, \"rm *\": deny }\n")
	same := writeFile(t, had)

	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"replay", "--data", data, "--policy", deny, "--json"}, &stdout, &stderr)
	t.Logf("engine replay (deny rm): %v\n%s%s", err, stdout.String(), stderr.String())
	if exitCode(err) != 1 {
		t.Fatalf("exit status %d (%v), want 1", exitCode(err), err)
	}
	var changed []string
	var sum struct {
		Redecided int            `json:"redecided"`
		Changed   map[string]int `json:"changed"`
	}
	for line := range strings.Lines(stdout.String()) {
		var l struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Old    struct{ Verdict string }
			New    struct {
				Verdict string
				Rule    *struct{ Action, Resource, Effect, Source string }
			}
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		switch l.Type {
		case "change":
			if l.Old.Verdict != "allow" || l.New.Verdict != "block" || l.New.Rule == nil ||
				*l.New.Rule != (struct{ Action, Resource, Effect, Source string }{"bash", "rm *", "deny", "project"}) {
				t.Errorf("change of %s: %+v → %+v, want allow → block by bash \"rm *\" deny (project)", l.CallID, l.Old, l.New)
			}
			changed = append(changed, l.CallID)
		case "summary":
			if err := json.Unmarshal([]byte(line), &sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(changed, ",") != "c2,c4" {
		t.Errorf("changed calls %v, want exactly c2,c4 (the rm ones)", changed)
	}
	if sum.Redecided != 5 || len(sum.Changed) != 1 || sum.Changed["allow→block"] != 2 {
		t.Errorf("summary %+v, want 5 re-decided, allow→block 2", sum)
	}

	stdout.Reset()
	err = run(ctx, []string{"replay", "--data", data, "--policy", deny}, &stdout, &stderr)
	if exitCode(err) != 1 || !strings.Contains(stdout.String(), `now: denied by rule bash "rm *" (project config)`) ||
		!strings.Contains(stdout.String(), "re-decided 5 calls in 1 runs: 2 would change (allow→block 2)") {
		t.Errorf("text: %v\n%s", err, stdout.String())
	}

	stdout.Reset()
	if err := run(ctx, []string{"replay", "--data", data, "--policy", same}, &stdout, &stderr); err != nil {
		t.Fatalf("the run's own configuration: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "re-decided 5 calls in 1 runs: 0 would change") {
		t.Errorf("the run's own configuration:\n%s", stdout.String())
	}

	// --nats: the stream read through a NATS connection of the caller's.
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(data, "nats"), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	stdout.Reset()
	err = run(ctx, []string{"replay", "--nats", srv.ClientURL(), "--policy", deny, "--run", "", "--since", "1h"}, &stdout, &stderr)
	if exitCode(err) != 1 || !strings.Contains(stdout.String(), "2 would change (allow→block 2)") {
		t.Errorf("--nats: %v\n%s%s", err, stdout.String(), stderr.String())
	}
}

// Usage and read errors exit 2, not 1: CI can tell a policy that changes
// verdicts from a backtest that could not run.
func TestReplayErrorsExit2(t *testing.T) {
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	bad := writeFile(t, "agents:\n  build:\n    permission:\n      bash: { \"*\": sometimes }\n")
	for _, args := range [][]string{
		{"replay", "--data", t.TempDir()},
		{"replay", "--data", t.TempDir(), "--policy", filepath.Join(t.TempDir(), "missing.yaml")},
		{"replay", "--data", t.TempDir(), "--policy", bad},
		{"replay", "--data", t.TempDir(), "--policy", bad, "extra"},
	} {
		err := run(ctx, args, &stdout, &stderr)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: exit status %d (%v), want 2", args, exitCode(err), err)
		}
		var u usageError
		if args[len(args)-1] == "extra" && !errors.As(err, &u) {
			t.Errorf("%v: %v is not a usage error", args, err)
		}
	}
}

// The backtest reads to the end of the stream even when its last message
// was deleted (it does not wait for a sequence that will never come), and
// an empty log re-decides nothing (exit 0).
func TestReplayReadsToTheEndOfAnyStream(t *testing.T) {
	data, _ := recordBashRun(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deny := writeFile(t, "agents:\n  build:\n    permission:\n      bash: { \"rm *\": deny }\n")
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(data, "nats"), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	s, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(ctx, info.State.LastSeq); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"replay", "--nats", srv.ClientURL(), "--policy", deny}, &stdout, &stderr)
	if exitCode(err) != 1 || !strings.Contains(stdout.String(), "allow→block 2") {
		t.Errorf("last message deleted: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	srv.Shutdown()

	// A data directory that holds no engine is not made one: replay says so.
	stdout.Reset()
	empty := t.TempDir()
	err = run(ctx, []string{"replay", "--data", empty, "--policy", deny}, &stdout, &stderr)
	if !errors.Is(err, errNoEngine) || exitCode(err) != 2 { // replay: 1 is "verdicts would change"
		t.Errorf("empty data directory: %v, want errNoEngine, exit 2\n%s%s", err, stdout.String(), stderr.String())
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("replay on an empty data directory left %d entries in it", len(ents))
	}
}
