package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/mcpgw"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// gwPolicy is the location's project file in the MCP server tests: bash
// asks, reading secret* is denied, everything else the build agent allows.
const gwPolicy = "agents:\n  build:\n    permission:\n      bash: ask\n      read: { \"*\": allow, \"secret*\": deny }\n"

// gwSetup is an `engine serve` process and a location for `engine mcp
// serve` processes to drive runs in, through --nats.
type gwSetup struct {
	url, loc string
	srv      *server
}

// newGWSetup starts `engine serve` on a new data directory, with a user
// configuration of its own (none), and a location holding gwPolicy, a
// notes.txt and a secret.txt.
func newGWSetup(t *testing.T) *gwSetup {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the child processes' user file: none
	loc := t.TempDir()
	for name, body := range map[string]string{".stepgate/config.yaml": gwPolicy, "notes.txt": "hello from notes\n", "secret.txt": "the secret\n"} {
		p := filepath.Join(loc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	return &gwSetup{url: "nats://" + addr, loc: loc, srv: serve(t, t.TempDir(), addr)}
}

// mcpArgs is the command line of `engine mcp serve` on this setup.
func (s *gwSetup) mcpArgs(extra ...string) []string {
	return append([]string{"mcp", "serve", "--nats", s.url, "--location", s.loc}, extra...)
}

// goClient connects the go-sdk's client over stdio to an `engine mcp serve`
// child process; closing the session (at the test's end) ends it.
func (s *gwSetup) goClient(t *testing.T, opts *mcp.ClientOptions, extra ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(engineBin, s.mcpArgs(extra...)...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stepgate-go-test", Version: "1"}, opts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to engine mcp serve: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("engine mcp serve's stderr:\n%s", stderr.String())
		}
	})
	return cs, cmd
}

// tickets are the pending tickets of tool, as `engine tickets --json` lists them.
func (s *gwSetup) tickets(t *testing.T, tool string) []sgclient.TicketView {
	t.Helper()
	var page sgclient.TicketPage
	if err := json.Unmarshal([]byte(engine(t, "tickets", "--nats", s.url, "--tool", tool, "--json")), &page); err != nil {
		t.Fatal(err)
	}
	return page.Tickets
}

// awaitTicket polls `engine tickets` until tool has exactly one pending
// ticket, and returns it.
func (s *gwSetup) awaitTicket(t *testing.T, tool string) sgclient.TicketView {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts := s.tickets(t, tool)
		if len(ts) == 1 {
			return ts[0]
		}
		if len(ts) > 1 || time.Now().After(deadline) {
			t.Fatalf("pending %s tickets: %+v, want one", tool, ts)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// show is `engine show RUN --json`.
func (s *gwSetup) show(t *testing.T, run string) sgclient.Run {
	t.Helper()
	var r sgclient.Run
	if err := json.Unmarshal([]byte(engine(t, "show", "--nats", s.url, "--json", run)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// gwToolNames lists the session's tools, sorted.
func gwToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// gwCall calls a tool and fails the test on a protocol error.
func gwCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// gwText is a result's text content, joined.
func gwText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// runOf is the run the setup's default MCP session drives.
func (s *gwSetup) runOf() string { return mcpgw.RunID("default", s.loc, "build", "", 0) }

// gwRun is the run of the setup's MCP session named session.
func gwRun(s *gwSetup, session string) string { return mcpgw.RunID(session, s.loc, "build", "", 0) }
