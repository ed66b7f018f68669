package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// TestMain lets the test binary stand in for the engine binary when the demo
// re-executes itself (demoChild), and installs it as the
// command engine of the testscript scripts (testdata/script): run under
// that name, the test binary is the engine binary, main and all.
func TestMain(m *testing.M) {
	sandbox.MaybeRun() // the sandbox helper re-executes this binary as itself
	if len(os.Args) > 1 && demoChild(os.Args[1]) {
		main() // as the engine binary: the same exit codes (agent --on-ask exit's 3), help and signals
		os.Exit(0)
	}
	testscript.Main(m, map[string]func(){"engine": main})
}

// demoChild reports whether the demo re-executes its binary as verb: the
// scripted demo's second process, and the commands engine demo --agent
// runs as a user would.
func demoChild(verb string) bool {
	switch verb {
	case "demo-resume", "agent", "approve", "show":
		return true
	}
	return false
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		why      string
		args     []string
		code     int
		contains string
	}{
		{"no verb", nil, 2, "usage: engine"},
		{"an unknown verb", []string{"frobnicate"}, 2, "usage: engine"},
		{"a bad flag", []string{"runs", "--no-such-flag"}, 2, "flag provided but not defined"},
		{"run without a script", []string{"run"}, 2, ""},
		{"show without a run", []string{"show"}, 2, ""},
		{"bench without a workload", []string{"bench"}, 2, ""},
		{"bench of an unknown workload", []string{"bench", "w99"}, 2, ""},
		{"bench with a bad sync", []string{"bench", "raw", "--sync", "sometimes"}, 2, ""},
		{"config without check", []string{"config"}, 2, ""},
		{"serve with no calls a step", []string{"serve", "--max-calls", "0"}, 2, "a whole number of at least 1"},
		{"serve with no execution slots", []string{"serve", "--max-executions", "-3"}, 2, "a whole number of at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("run succeeded")
			}
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d (%v), want %d", got, err, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.contains)
			}
		})
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"runs", "-h"}, &bytes.Buffer{}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("runs -h = %v, want flag.ErrHelp", err)
	}
}

// The demo is the README's first command: it must exit 0 and show allowed
// and blocked calls on both sides of the engine restart.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"demo"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"c2   grep       allow   main.go:3: // TODO: bump before the release",
		`blocked: denied by rule read "secrets/*" (run override)`,
		"Unknown tool: rm",
		"c6's 5000 lines went to ",
		"5000\t5000",
		"(exit code 0)",
		"step 4 awaits a human",
		"the run waits for a human; the engine stops",
		"a new engine process starts on the same data",
		"approved once by demo-operator",
		"rejected with feedback by demo-operator",
		"c8   edit       confirm Edited main.go: 1 replacement",
		"c9   bash       confirm The user rejected this call: no force pushes; open a pull request instead",
		`c10  grep       allow   main.go:4: const version = "1.0"`,
		"(permission): once by demo-operator",
		"ended (completed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// engine config check on a malformed file fails naming the file, the line
// and the key; on a good one it prints the rules with their sources.
func TestConfigCheck(t *testing.T) {
	loc := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(loc, ".stepgate", "config.yaml")
	if err := os.WriteFile(file, []byte("agents:\n  build:\n    permission:\n      bash: { \"git *\": allow, \"rm *\": nope }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"config", "check", "--location", loc}, &stdout, &stderr)
	if err == nil || exitCode(err) == 0 || !strings.Contains(err.Error(), file+":4: agents.build.permission.bash.rm *") {
		t.Errorf("config check of a malformed file = %v, want an error at %s:4 naming the key", err, file)
	}
	if err := os.WriteFile(file, []byte("agents:\n  build:\n    permission:\n      bash: { \"git *\": allow }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"config", "check", "--location", loc}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	// No user file trusts the project: its rule is listed as one that narrows only.
	if !strings.Contains(stdout.String(), `allow bash                 "git *"                      project config, narrows only`) {
		t.Errorf("effective rules:\n%s", stdout.String())
	}
}

// engine verify rebuilds the projection from the log and finds it equal to
// the checkpointed one.
func TestVerify(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c1","tool":"echo","args":{"text":"a"}}]}
{"calls":[{"id":"c2","tool":"echo_fx","args":{"text":"b"}}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	for range 2 {
		if err := run(context.Background(), []string{"run", "--data", data, "--test-tools", "--script", script, "--location", ws}, &stdout, &stderr); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"verify", "--data", data}, &stdout, &stderr); err != nil {
		t.Fatalf("verify: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "verified 2 runs") {
		t.Errorf("verify said %q", stdout.String())
	}
}
