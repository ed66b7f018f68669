package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor/mcp"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/executor/sandbox/sandboxtest"
)

func canSandbox(t testing.TB) {
	t.Helper()
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skipf("this host cannot sandbox: %+v", h)
	}
}

// visibleDir is a directory a sandboxed process sees (read-only).
func visibleDir(t *testing.T) string { return sandboxtest.VisibleDir(t, "sandboxed-") }

// sandboxedServer is the test server (with write_file) copied where a
// sandbox sees it, run in loc under workspace-write without a network
// (Sandbox nil: unsandboxed).
func sandboxedServer(t *testing.T, name, loc string, pol *sandbox.Policy, env map[string]string) mcp.Server {
	t.Helper()
	b, err := os.ReadFile(testServer.Path)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(visibleDir(t), "mcptest-server")
	if err := os.WriteFile(bin, b, 0o700); err != nil {
		t.Fatal(err)
	}
	return mcp.Server{Name: name, Command: mcptest.Binary{Path: bin}.Command(mcptest.Flags{Writer: true}), Dir: loc, Env: env, Sandbox: pol}
}

// A stdio server that opts into the sandbox runs in it: it still serves
// its tools (and writes in its location), but cannot write outside it;
// the same server unsandboxed can (the positive control). Its configured
// environment reaches it.
func TestSandboxedStdioServer(t *testing.T) {
	canSandbox(t)
	ctx := context.Background()
	for _, boxed := range []bool{false, true} {
		loc, outside := t.TempDir(), visibleDir(t)
		var pol *sandbox.Policy
		if boxed {
			pol = &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetOff, Location: loc}
		}
		set, _ := start(t, sandboxedServer(t, "boxed", loc, pol, map[string]string{"MCPTEST_MARK": "configured"})).await(t, 0, ready)
		if got := call(t, ctx, set, "mcp__boxed__echo", `{"text":"hi"}`); got.IsError || got.Text() != "hi" {
			t.Fatalf("boxed %v: echo = %+v", boxed, got)
		}
		if got := call(t, ctx, set, "mcp__boxed__environ", `{}`); !strings.Contains(got.Text(), "MCPTEST_MARK") {
			t.Errorf("boxed %v: the configured environment did not reach the server: %q", boxed, got.Text())
		}
		inside := filepath.Join(loc, "in.txt")
		if got := call(t, ctx, set, "mcp__boxed__write_file", `{"path":"`+inside+`","text":"x"}`); got.IsError {
			t.Errorf("boxed %v: the write in the location failed: %q", boxed, got.Text())
		}
		escaped := filepath.Join(outside, "escaped")
		got := call(t, ctx, set, "mcp__boxed__write_file", `{"path":"`+escaped+`","text":"x"}`)
		_, err := os.Stat(escaped)
		if wrote := err == nil; wrote == boxed {
			t.Errorf("boxed %v: the write outside the location happened: %v (result %q)", boxed, wrote, got.Text())
		}
		if boxed && (!got.IsError || !strings.Contains(strings.ToLower(got.Text()), "read-only file system")) {
			t.Errorf("the sandboxed write outside: %+v, want the kernel's refusal", got)
		}
	}
}

// Fail closed: a server whose sandbox this host cannot enforce is not
// started; the connection fails with sandbox_unavailable, naming what is
// missing, and the server has no tools.
func TestSandboxedStdioServerFailsClosed(t *testing.T) {
	loc := t.TempDir()
	srv := sandboxedServer(t, "boxed", loc, &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc},
		map[string]string{sandbox.EnvTestNoLandlock: "1"})
	r := start(t, srv)
	down, _ := r.await(t, 0, func(s mcp.ToolSet) bool { return s.Phase == mcp.Down })
	if down.Err == nil || !strings.Contains(down.Err.Error(), "sandbox_unavailable") || len(down.Tools) != 0 {
		t.Fatalf("down: %v, %d tools; want sandbox_unavailable and no tools", down.Err, len(down.Tools))
	}
	if st := r.c.State(); st.Phase == mcp.Ready || !strings.Contains(st.LastError, "sandbox_unavailable") {
		t.Errorf("state %s (%s), want not ready, sandbox_unavailable", st.Phase, st.LastError)
	}
}
