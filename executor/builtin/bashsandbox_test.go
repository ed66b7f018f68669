package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/executor/sandbox"
)

func sandboxedBash(t *testing.T, loc, outside string, p *sandbox.Policy) executor.Result {
	t.Helper()
	tool, err := builtin.Bash()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(builtin.BashInput{Command: "echo in > in.txt && cat in.txt && echo pwned > " + outside})
	prep, err := tool.Prepare(executor.Call{Run: "r", Step: 1, CallID: "c", Location: loc, Sandbox: p}, args)
	if err != nil {
		t.Fatal(err)
	}
	return prep.Run(context.Background())
}

// TestBashSandboxed: with a workspace-write policy on the call, the bash
// tool's command writes in the location and is refused outside it
// (positive control: without a policy the same write lands), and the
// result records what was enforced.
func TestBashSandboxed(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skipf("this host cannot sandbox: %+v", h)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, ReadOnly: []string{filepath.Dir(outside)}}

	res := sandboxedBash(t, t.TempDir(), outside, nil)
	if b, _ := os.ReadFile(outside); string(b) != "pwned\n" || strings.Contains(string(res.Structured), "sandbox") {
		t.Fatalf("positive control: unsandboxed, the write did not land: %q %s", b, res.Text())
	}
	if err := os.WriteFile(outside, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	res = sandboxedBash(t, t.TempDir(), outside, p)
	if b, _ := os.ReadFile(outside); string(b) != "original\n" {
		t.Fatalf("the sandboxed command wrote outside the location: %q", b)
	}
	if !strings.HasPrefix(res.Text(), "in\n") || !strings.Contains(res.Text(), outside+": Read-only file system") ||
		!strings.Contains(res.Text(), "(exit code 1)") {
		t.Fatalf("result:\n%s", res.Text())
	}
	var out builtin.BashOutput
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatalf("structured %s: %v", res.Structured, err)
	}
	if out.Sandbox == nil || out.Sandbox.Mode != sandbox.WorkspaceWrite || out.Sandbox.LandlockABI < 1 || !out.Sandbox.Seccomp {
		t.Fatalf("enforced: %+v", out.Sandbox)
	}
}

// TestBashSandboxUnavailable: with Landlock made unavailable (the test
// switch in the environment), a sandboxed bash call is refused with
// sandbox_unavailable and does not run.
func TestBashSandboxUnavailable(t *testing.T) {
	t.Setenv(sandbox.EnvTestNoLandlock, "1")
	loc := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	res := sandboxedBash(t, loc, outside, &sandbox.Policy{Mode: sandbox.WorkspaceWrite})
	if !res.IsError || !strings.Contains(res.Text(), "sandbox_unavailable: ") || !strings.Contains(res.Text(), "Landlock is not available") {
		t.Fatalf("result: %+v", res)
	}
	for _, f := range []string{filepath.Join(loc, "in.txt"), outside} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the command ran: %s: %v", f, err)
		}
	}
}
