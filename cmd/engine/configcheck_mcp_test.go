package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engine config check lists the location's MCP servers: transport, source,
// trust, enabled or why not, deny_all, allow and ticket_ttl, secrets as
// their references; a project file that trusts a server fails naming the
// file and line.
func TestConfigCheckMCPServers(t *testing.T) {
	loc := t.TempDir()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("SG_CHECK_TOKEN", "plaintext-never-printed")
	userFile := filepath.Join(xdg, "stepgate", "config.yaml")
	projectFile := filepath.Join(loc, ".stepgate", "config.yaml")
	for _, d := range []string{filepath.Dir(userFile), filepath.Dir(projectFile)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(userFile, "mcp:\n  search:\n    url: \"https://127.0.0.1:9/mcp\"\n    headers: {Authorization: \"Bearer secret://SG_CHECK_TOKEN\"}\n    trust: true\n    allow: [\"query*\"]\n    ticket_ttl: 1h\n")
	write(projectFile, "mcp:\n  search: {allow: [query_web], ticket_ttl: 10m}\n  lint: {command: [./lint-mcp, --fast]}\n")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"config", "check", "--location", loc}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{
		"  mcp server lint  stdio  source " + projectFile + "  trust false  not enabled: declared by the project, not enabled by the user's file (add it to mcp_project_servers)\n    command [\"./lint-mcp\" \"--fast\"]\n    deny_all false\n",
		"  mcp server search  http  source " + userFile + "  trust true  enabled\n    url https://127.0.0.1:9/mcp\n    header Authorization=\"Bearer secret://SG_CHECK_TOKEN\"\n" +
			"    deny_all false  allow [\"query*\"] ∩ [\"query_web\"]  ticket_ttl 10m0s  narrowed by " + projectFile + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config check lacks\n%s\nin\n%s", want, out)
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"config", "check", "--json", "--location", loc}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), `"mcp_servers"`) || !strings.Contains(stdout.String(), "secret://SG_CHECK_TOKEN") {
		t.Errorf("config check --json:\n%s", stdout.String())
	}
	if strings.Contains(out+stdout.String(), "plaintext-never-printed") {
		t.Error("config check printed a secret's value")
	}
	write(projectFile, "mcp:\n  lint:\n    command: [./lint-mcp]\n    trust: true\n")
	err := run(context.Background(), []string{"config", "check", "--location", loc}, &stdout, &stderr)
	if err == nil || exitCode(err) == 0 || !strings.Contains(err.Error(), projectFile+":4: mcp.lint.trust: a project file may not trust a server") {
		t.Errorf("config check of a project file that trusts = %v", err)
	}
}
