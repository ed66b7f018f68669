package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
)

// mcpLocation writes a user's file (through XDG_CONFIG_HOME) declaring the
// test MCP server over stdio with a tool set that has tools to skip, an
// HTTP server nobody serves, and a location whose project file narrows
// the first and declares a server of its own.
func mcpLocation(t *testing.T) string {
	t.Helper()
	bin, err := mcptest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(tools, "invalid\n")
	argv, _ := json.Marshal(bin.Command(mcptest.Flags{ToolsFile: tools}))
	write(filepath.Join(dir, "xdg", "stepgate", "config.yaml"), "agents: {build: {permission: {\"*\": allow}}}\nmcp:\n"+
		"  test: {command: "+string(argv)+", trust: true}\n"+
		"  web: {url: \"http://127.0.0.1:1/mcp\", headers: {Authorization: \"Bearer secret://MCPLS_TOKEN\"}}\n")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("MCPLS_TOKEN", "mcpls-secret-value")
	ws := filepath.Join(dir, "ws")
	write(filepath.Join(ws, ".stepgate", "config.yaml"), "mcp:\n  test: {allow: [echo]}\n  proj: {command: [./proj-mcp]}\n")
	return ws
}

// checkMCPList checks the listing of mcpLocation's servers.
func checkMCPList(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"proj  stdio  not enabled: declared by the project, not enabled by the user's file (add it to mcp_project_servers)\n",
		"test  stdio  ready\n",
		"; trusted; allow echo\n",
		"  mcp__test__echo                          read_only\n",
		"  mcp__test__danger_rm                     side_effecting  hidden (deny_all or allow)\n",
		`  skipped "dup.x": 2 of the server's tools are named mcp__test__dup_x after sanitising` + "\n",
		"web  http  down: mcp server unavailable: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("engine mcp ls lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mcpls-secret-value") {
		t.Errorf("engine mcp ls printed a secret:\n%s", out)
	}
}

// `engine mcp ls --data DIR`: the verb's own engine connects to the
// servers and lists them.
func TestMCPListData(t *testing.T) {
	ws := mcpLocation(t)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, []string{"mcp", "ls", "--data", t.TempDir(), "--location", ws}, &out, &errb); err != nil {
		t.Fatalf("engine mcp ls: %v\n%s", err, errb.String())
	}
	checkMCPList(t, out.String())
}

// `engine mcp ls --nats URL`: the serving host answers with its own
// connections (mcp_servers endpoint), JSON as well as text.
func TestMCPListNATS(t *testing.T) {
	ws := mcpLocation(t)
	ctx, url := serveData(t, t.TempDir())
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"mcp", "ls", "--nats", url, "--location", ws}, &out, &errb); err != nil {
		t.Fatalf("engine mcp ls: %v\n%s", err, errb.String())
	}
	checkMCPList(t, out.String())
	out.Reset()
	if err := run(ctx, []string{"mcp", "ls", "--nats", url, "--location", ws, "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var list sgclient.MCPServerList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Servers) != 3 || list.Servers[1].State != sgclient.MCPReady {
		t.Errorf("--json: %v\n%s", err, out.String())
	}
}

func TestMCPVerbUsage(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"mcp", "nope"}, &out, &errb)
	if _, ok := err.(usageError); !ok {
		t.Errorf("engine mcp nope: %v, want a usage error", err)
	}
}
