package integration

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
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/step/steptest"
)

// mcpBin builds the test MCP server for one test (the build cache makes
// the second build a link).
func mcpBin(t *testing.T) mcptest.Binary {
	t.Helper()
	bin, err := mcptest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// mcpRules are the build agent's rules in the MCP tests: everything
// allowed but the test server's danger_* tools, which are denied.
const mcpRules = "agents:\n  build:\n    permission:\n      \"*\": allow\n      \"mcp__test__danger*\": deny\n"

// writeUserFile writes a user's configuration file and returns its path.
func writeUserFile(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "stepgate", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// yamlList is a YAML flow list of quoted strings.
func yamlList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// startMCPHost starts an in-process host whose configuration is the user's
// file uf.
func startMCPHost(t *testing.T, s *steptest.Server, uf, dir string) *commands.Host {
	t.Helper()
	return startMCPHostWith(t, s, uf, dir, commands.MCPOptions{})
}

// startMCPHostWith is startMCPHost with the MCP options opts (the
// backoff's and keep-alive's test values where opts leaves them zero).
func startMCPHostWith(t *testing.T, s *steptest.Server, uf, dir string, opts commands.MCPOptions) *commands.Host {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	out := filepath.Join(dir, "tool-output")
	l := config.Loader{UserFile: uf, ToolOutputDir: out}
	opts.Secrets = l.Secrets
	if opts.MinBackoff == 0 {
		opts.MinBackoff, opts.MaxBackoff, opts.KeepAlive = 50*time.Millisecond, 300*time.Millisecond, 200*time.Millisecond
	}
	h, err := commands.StartHost(ctxT(t), s.JS, newCounted(t).reg, commands.HostConfig{StateDir: filepath.Join(dir, "state"), Engine: commands.Config{
		Host: "mcp", ToolOutputDir: out, Policy: commands.LoaderPolicy(l, slog.Default()),
		MCP: opts,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// catalogNames are a catalogue's tool names under the mcp__ prefix.
func catalogNames(cat commands.Catalog) []string {
	var out []string
	for _, tl := range cat.Tools {
		if strings.HasPrefix(tl.Name, "mcp__") {
			out = append(out, tl.Name)
		}
	}
	return out
}

// step submits one call as the run's next step.
func mcpStep(t *testing.T, h *commands.Host, run string, n int, id, tool, args string) *commands.StepOutcome {
	t.Helper()
	out, err := h.SubmitStep(ctxT(t), commands.SubmitStepRequest{Run: run, Step: n,
		Calls: []commands.CallRequest{{ID: id, Tool: tool, Args: json.RawMessage(args)}}})
	if err != nil {
		t.Fatalf("step %d (%s): %v", n, tool, err)
	}
	return out
}

// eventsOf are every event of the run's commits in the log.
func eventsOf(t *testing.T, h *commands.Host, run string) []events.Event {
	t.Helper()
	commits, err := h.Log.ReadRun(ctxT(t), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for _, c := range commits {
		out = append(out, c.Commit.Events...)
	}
	return out
}

// eventually polls cond every 20 ms for d at most.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
