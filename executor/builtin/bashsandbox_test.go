package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/executor/sandbox/sandboxtest"
)

func sandboxedBash(t *testing.T, loc, outside string, p *sandbox.Policy) executor.Result {
	t.Helper()
	return bashIn(t, nil, loc, builtin.BashInput{Command: "echo in > in.txt && cat in.txt && echo pwned > " + outside}, p)
}

// bashIn runs the bash tool's call in under p, on pl's warm helpers when
// pl is not nil.
func bashIn(t *testing.T, pl *sandbox.Pool, loc string, in builtin.BashInput, p *sandbox.Policy) executor.Result {
	t.Helper()
	tool, err := builtin.Bash()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(in)
	prep, err := tool.Prepare(executor.Call{Run: "r", Step: 1, CallID: "c", Location: loc, Sandbox: p, Sandboxes: pl}, args)
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

// TestBashPooled: through the call's pool (what steps use) the bash
// tool's command is contained as one-shot (a write outside refused, the
// record), and a command that times out is killed with every process it
// started, in another session too, before the result is back.
func TestBashPooled(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skipf("this host cannot sandbox: %+v", h)
	}
	pl := sandbox.NewPool()
	defer pl.Close()
	loc := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, ReadOnly: []string{filepath.Dir(outside)}}
	res := bashIn(t, pl, loc, builtin.BashInput{Command: "echo in > in.txt && cat in.txt && echo pwned > " + outside}, p)
	var out builtin.BashOutput
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatalf("structured %s: %v", res.Structured, err)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) || !strings.Contains(res.Text(), "Read-only file system") ||
		out.Sandbox == nil || out.Sandbox.LandlockABI < 1 || !out.Sandbox.Seccomp {
		t.Fatalf("pooled: %v\n%s", err, res.Text())
	}
	if n := helperChildren(); n != 1 {
		t.Fatalf("%d warm helpers after the call, want the pool's one", n)
	}
	tag := "600.4242" + strings.Repeat("7", 3)
	res = bashIn(t, pl, loc, builtin.BashInput{Command: "setsid sleep " + tag + " & sleep " + tag, Timeout: 500}, p)
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatalf("structured %s: %v", res.Structured, err)
	}
	if !out.TimedOut || out.ExitCode != 137 {
		t.Fatalf("timed out: %+v\n%s", out, res.Text())
	}
	if n := sandboxtest.Processes(tag); n != 0 {
		t.Fatalf("%d processes of the timed-out command survived it", n)
	}
}

// helperChildren counts this process's live children that are sandbox
// helpers (a pool's warm helper outlives its call; a one-shot one does not).
func helperChildren() int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		st, _ := os.ReadFile(d + "/stat")
		if err != nil || !strings.HasPrefix(string(b), "stepgate-sandbox\x00") {
			continue
		}
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}
