package commands_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/step/steptest"
)

// An MCP stdio server whose entry in the user's file says sandbox runs in
// it: its tools still serve, it writes its writable root, and neither the
// host's working directory (it serves every run) nor anything else; the
// same server without the key writes outside (the positive control).
func TestSandboxedMCPServerFromTheConfiguration(t *testing.T) {
	canSandbox(t)
	bin, err := mcptest.Build(outsideDir(t)) // where a sandbox sees it
	if err != nil {
		t.Fatal(err)
	}
	argv, _ := json.Marshal(bin.Command(mcptest.Flags{Writer: true}))
	s := steptest.Start(t, "")
	for _, boxed := range []bool{false, true} {
		outside, root := outsideDir(t), rootOutsideWorkdir(t)
		entry := "    command: " + string(argv) + "\n"
		if boxed {
			entry += "    sandbox: { mode: workspace-write, writable: [" + root + "] }\n"
		}
		uf := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(uf, []byte("agents:\n  build:\n    permission: { \"*\": allow }\nmcp:\n  box:\n"+entry), 0o600); err != nil {
			t.Fatal(err)
		}
		l := config.Loader{UserFile: uf, ToolOutputDir: filepath.Join(t.TempDir(), "out")}
		h := startHostCfg(t, s, registry(t, &counter{}), commands.Config{Host: "box", ToolOutputDir: l.ToolOutputDir,
			Policy: commands.LoaderPolicy(l, slog.Default()),
			MCP:    commands.MCPOptions{Secrets: l.Secrets, MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}})
		run := startIn(t, h, t.TempDir(), "")
		write := func(n int, path string) commands.CallResult {
			return submit(t, h, run, n, call("w", "mcp__box__write_file", map[string]string{"path": path, "text": "x"})).Results[0]
		}
		if r := submit(t, h, run, 1, call("e", "mcp__box__echo", map[string]string{"text": "hi"})).Results[0]; r.IsError || r.Content != "hi" {
			t.Fatalf("boxed %v: echo = %+v", boxed, r)
		}
		if r := write(2, filepath.Join(root, "ok")); r.IsError {
			t.Errorf("boxed %v: the write to the writable root: %+v", boxed, r)
		}
		r := write(3, filepath.Join(outside, "escaped"))
		_, err := os.Stat(filepath.Join(outside, "escaped"))
		if wrote := err == nil; wrote == boxed {
			t.Errorf("boxed %v: the write outside happened: %v (%+v)", boxed, wrote, r)
		}
		if boxed && (!r.IsError || !strings.Contains(strings.ToLower(r.Content), "read-only file system")) {
			t.Errorf("the sandboxed server's write outside: %+v, want the kernel's refusal", r)
		}
	}
}

// rootOutsideWorkdir is a directory neither under the temporary directory
// nor under the working directory (which a user's server sees read-only,
// writable roots inside it too).
func rootOutsideWorkdir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(wd), ".mcp-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
