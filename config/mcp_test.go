package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// Every refused form of the mcp section, in the user's file and the
// project's, is an error naming the file, the line and the key.
func TestMCPDecodeRefused(t *testing.T) {
	tests := []struct {
		why    string
		source gate.Source
		text   string
		want   string
	}{
		{"a bad server name", gate.SourceUser, "mcp:\n  1x: {command: [a]}\n", `f.yaml:2: mcp.1x: server name "1x"`},
		{"a server name too long", gate.SourceUser, "mcp:\n  " + strings.Repeat("a", 33) + ": {command: [a]}\n", "f.yaml:2: mcp.aaaa"},
		{"a server name with __", gate.SourceUser, "mcp:\n  a__b: {command: [a]}\n", `f.yaml:2: mcp.a__b: server name "a__b": may not contain __`},
		{"a server name ending with _", gate.SourceUser, "mcp:\n  a_: {command: [a]}\n", `f.yaml:2: mcp.a_: server name "a_": may not contain __ or end with _`},
		{"a name with __ to enable", gate.SourceUser, "mcp_project_servers: [a__b]\n", "f.yaml:1: mcp_project_servers[0]: want a server name"},
		{"an unknown key", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    cmd: [b]\n", "f.yaml:4: mcp.s.cmd: unknown key"},
		{"neither command nor url", gate.SourceUser, "mcp:\n  s:\n    trust: true\n", "f.yaml:3: mcp.s: want command (a stdio server) or url"},
		{"both command and url", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    url: http://127.0.0.1:1/mcp\n", "f.yaml:4: mcp.s.url: give command (a stdio server) or url (an HTTP server), not both"},
		{"an empty command", gate.SourceUser, "mcp:\n  s: {command: []}\n", "f.yaml:2: mcp.s.command: want a non-empty list"},
		{"a command not a list", gate.SourceUser, "mcp:\n  s: {command: mcp-files}\n", "f.yaml:2: mcp.s.command: want a non-empty list"},
		{"an empty program", gate.SourceUser, "mcp:\n  s: {command: [\"\", x]}\n", "f.yaml:2: mcp.s.command[0]: the program may not be empty"},
		{"a command argument not plain", gate.SourceUser, "mcp:\n  s: {command: [a, [b]]}\n", "f.yaml:2: mcp.s.command[1]: want a plain value"},
		{"a secret in a command", gate.SourceUser, "mcp:\n  s: {command: [a, \"--token=secret://T\"]}\n", "f.yaml:2: mcp.s.command[1]: a command may not hold a secret reference"},
		{"env with a url", gate.SourceUser, "mcp:\n  s:\n    url: https://h/mcp\n    env: {A: b}\n", "f.yaml:4: mcp.s.env: env is for a stdio server"},
		{"headers with a command", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    headers: {A: b}\n", "f.yaml:4: mcp.s.headers: headers are for an HTTP server"},
		{"a URL of another scheme", gate.SourceUser, "mcp:\n  s: {url: \"ftp://h/x\"}\n", "f.yaml:2: mcp.s.url: want an http:// or https:// URL"},
		{"a URL without a host", gate.SourceUser, "mcp:\n  s: {url: \"http:///x\"}\n", "f.yaml:2: mcp.s.url: want an http:// or https:// URL"},
		{"a URL with credentials", gate.SourceUser, "mcp:\n  s: {url: \"https://u:p@h/x\"}\n", "f.yaml:2: mcp.s.url: a URL may not hold credentials"},
		{"a secret in a URL", gate.SourceUser, "mcp:\n  s: {url: \"https://h/x?k=secret://K\"}\n", "f.yaml:2: mcp.s.url: a URL may not hold a secret reference"},
		{"a bad header name", gate.SourceUser, "mcp:\n  s:\n    url: https://h/x\n    headers: {\"A b\": c}\n", `f.yaml:4: mcp.s.headers.A b: header name "A b"`},
		{"a header value with a line break", gate.SourceUser, "mcp:\n  s:\n    url: https://h/x\n    headers: {A: \"b\\r\\nX: y\"}\n", "f.yaml:4: mcp.s.headers.A: a value may not hold a line break"},
		{"an env name with =", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    env: {\"A=B\": c}\n", `f.yaml:4: mcp.s.env.A=B: environment variable name`},
		{"an env value not plain", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    env: {A: [c]}\n", "f.yaml:4: mcp.s.env.A: want a plain value"},
		{"a prefix without a name", gate.SourceUser, "mcp:\n  s:\n    command: [a]\n    env: {A: \"secret://1x\"}\n", "f.yaml:4: mcp.s.env.A: secret:// at byte 0 is not followed by a name"},
		{"trust not a boolean", gate.SourceUser, "mcp:\n  s: {command: [a], trust: yes}\n", "f.yaml:2: mcp.s.trust: want true or false"},
		{"deny_all not a boolean", gate.SourceUser, "mcp:\n  s: {command: [a], deny_all: 1}\n", "f.yaml:2: mcp.s.deny_all: want true or false"},
		{"allow not a list", gate.SourceUser, "mcp:\n  s: {command: [a], allow: read}\n", "f.yaml:2: mcp.s.allow: want a list"},
		{"an allow pattern with a dot", gate.SourceUser, "mcp:\n  s: {command: [a], allow: [read.file]}\n", "f.yaml:2: mcp.s.allow[0]: want a tool name or pattern"},
		{"a bad ticket_ttl", gate.SourceUser, "mcp:\n  s: {command: [a], ticket_ttl: -1m}\n", "f.yaml:2: mcp.s.ticket_ttl: want a positive duration"},
		{"mcp not a mapping", gate.SourceUser, "mcp: [a]\n", "f.yaml:1: mcp: want a mapping"},
		{"a server twice in two documents", gate.SourceUser, "mcp: {s: {command: [a]}}\n---\nmcp:\n  s: {command: [b]}\n", `f.yaml:4: mcp.s: server "s" is declared twice in this file (first at line 1)`},
		{"a bad name to enable", gate.SourceUser, "mcp_project_servers: [\"a b\"]\n", "f.yaml:1: mcp_project_servers[0]: want a server name"},
		{"an empty secrets_file", gate.SourceUser, "secrets_file: \"\"\n", "f.yaml:1: secrets_file: want a path"},

		{"the project trusts", gate.SourceProject, "mcp:\n  s:\n    url: https://h/mcp\n    trust: true\n", "f.yaml:4: mcp.s.trust: a project file may not trust a server"},
		{"the project uses a secret in a header", gate.SourceProject, "mcp:\n  s:\n    url: https://h/mcp\n    headers: {Authorization: \"Bearer secret://TOKEN\"}\n", "f.yaml:4: mcp.s.headers.Authorization: a project file may not use secret references"},
		{"the project uses a secret in env", gate.SourceProject, "mcp:\n  s:\n    command: [a]\n    env: {T: \"secret://TOKEN\"}\n", "f.yaml:4: mcp.s.env.T: a project file may not use secret references"},
		{"the project uses a malformed secret", gate.SourceProject, "mcp:\n  s:\n    command: [a]\n    env: {T: \"secret://\"}\n", "f.yaml:4: mcp.s.env.T: a project file may not use secret references"},
		{"the project enables servers", gate.SourceProject, "mcp_project_servers: [s]\n", "f.yaml:1: mcp_project_servers: only the user's file may enable a project's servers"},
		{"the project names a secrets file", gate.SourceProject, "secrets_file: s.yaml\n", "f.yaml:1: secrets_file: only the user's file may name a secrets file"},
		{"the project sets env alone", gate.SourceProject, "mcp:\n  s:\n    env: {A: b}\n", "f.yaml:3: mcp.s.env: env without command"},
		{"the project sets headers alone", gate.SourceProject, "mcp:\n  s:\n    headers: {A: b}\n", "f.yaml:3: mcp.s.headers: headers without url"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := config.Parse("f.yaml", []byte(tt.text), tt.source)
			if err == nil || !errors.Is(err, config.ErrInvalid) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error starting %q", err, tt.want)
			}
		})
	}
}

// mcpLayers writes the user's file and the project's and resolves the
// location's servers.
func mcpLayers(t *testing.T, user, project string) (srvs []config.MCPServer, userFile, projectFile string, err error) {
	t.Helper()
	dir := t.TempDir()
	userFile = filepath.Join(dir, "user.yaml")
	loc := filepath.Join(dir, "loc")
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if user != "" {
		if err := os.WriteFile(userFile, []byte(user), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if project != "" {
		if err := os.WriteFile(config.ProjectFile(loc), []byte(project), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srvs, err = config.Loader{UserFile: userFile}.MCPServers(loc)
	return srvs, userFile, config.ProjectFile(loc), err
}

// The accepted forms, and how the user's file and the project's combine.
func TestMCPServersCombine(t *testing.T) {
	const user = "mcp:\n" +
		"  files:\n    command: [mcp-files, --root, .]\n    env: {TOKEN: \"secret://FILES_TOKEN\", MODE: ro}\n    trust: true\n    allow: [\"read_*\", list]\n    ticket_ttl: 1h\n" +
		"  search:\n    url: \"https://127.0.0.1:9/mcp\"\n    headers: {Authorization: \"Bearer secret://SEARCH\"}\n    trust: true\n" +
		"  off: {command: [x], deny_all: true}\n" +
		"mcp_project_servers: [lint]\n"
	const project = "mcp:\n" +
		"  files: {allow: [\"read_file\", \"write*\"], ticket_ttl: 2h}\n" +
		"  search: {trust: false, deny_all: true, ticket_ttl: 5m}\n" +
		"  lint: {command: [./lint-mcp], env: {LEVEL: \"3\"}}\n" +
		"  build: {command: [./build-mcp]}\n" +
		"  docs: {url: \"http://127.0.0.1:8/mcp\", headers: {X-Project: demo}}\n"
	srvs, uf, pf, err := mcpLayers(t, user, project)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.MCPServer{
		{Name: "build", Command: []string{"./build-mcp"}, Source: pf, Enabled: false, Why: config.WhyProjectStdio},
		{Name: "docs", URL: "http://127.0.0.1:8/mcp", Headers: map[string]string{"X-Project": "demo"}, Source: pf, Enabled: false, Why: config.WhyProject},
		{Name: "files", Command: []string{"mcp-files", "--root", "."}, Env: map[string]string{"TOKEN": "secret://FILES_TOKEN", "MODE": "ro"},
			Trust: true, Allow: [][]string{{"read_*", "list"}, {"read_file", "write*"}}, TicketTTL: time.Hour, Source: uf, Narrowed: []string{pf}, Enabled: true},
		{Name: "lint", Command: []string{"./lint-mcp"}, Env: map[string]string{"LEVEL": "3"}, Source: pf, Enabled: true},
		{Name: "off", Command: []string{"x"}, DenyAll: true, Source: uf, Enabled: false, Why: config.WhyUserDenyAll},
		{Name: "search", URL: "https://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer secret://SEARCH"},
			DenyAll: true, TicketTTL: 5 * time.Minute, Source: uf, Narrowed: []string{pf}, Enabled: true},
	}
	if d := cmp.Diff(want, srvs); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
	files := srvs[2]
	for tool, ok := range map[string]bool{"read_file": true, "read_dir": false, "list": false, "write_file": false} {
		if files.Allows(tool) != ok {
			t.Errorf("files.Allows(%q) = %v, want %v (the intersection of both lists)", tool, !ok, ok)
		}
	}
	if srvs[5].Allows("anything") {
		t.Error("a deny_all server allows a tool")
	}
	if srvs[1].Transport() != "http" || srvs[0].Transport() != "stdio" {
		t.Errorf("transports %s, %s", srvs[1].Transport(), srvs[0].Transport())
	}
}

// A project file may not replace how a server the user's file declares is
// reached, nor narrow a server nobody declares; the errors name the
// project file and line, and Effective denies everything.
func TestMCPServersProjectRefused(t *testing.T) {
	const user = "agents: {build: {permission: {\"*\": allow}}}\nmcp:\n  s: {url: \"https://127.0.0.1:9/mcp\", headers: {A: \"secret://A\"}}\n"
	tests := []struct{ why, project, want string }{
		{"replacing the url", "mcp:\n  s: {url: \"https://evil.example/mcp\"}\n", `:2: mcp.s: a project file may not replace the command, url, env or headers of server "s"`},
		{"replacing with a command", "mcp:\n  s: {command: [sh]}\n", `:2: mcp.s: a project file may not replace`},
		{"narrowing nothing", "mcp:\n  t: {deny_all: true}\n", ":2: mcp.t: declares neither command nor url, and the user's file declares no such server"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, uf, pf, err := mcpLayers(t, user, tt.project)
			if err == nil || !strings.HasPrefix(err.Error(), pf+tt.want) || !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("MCPServers = %v, want %q", err, pf+tt.want)
			}
			loc := filepath.Dir(filepath.Dir(pf))
			eff, err := config.Loader{UserFile: uf}.Effective("build", loc)
			if err == nil || gate.Evaluate("read", "x", eff.Rules).Effect != gate.Deny || eff.MCPServers != nil {
				t.Errorf("Effective = %+v, %v; want deny-all, no servers and the error", eff, err)
			}
		})
	}
}

// A stdio server's sandbox (opt-in): its mode and network off or host, as
// its declaring file says; a project file may only tighten it; an HTTP
// server has none, and a server's sandbox has no proxy.
func TestMCPServerSandbox(t *testing.T) {
	const user = "mcp:\n" +
		"  files:\n    command: [mcp-files]\n    sandbox: { mode: workspace-write, network: host, writable: [/var/cache/files] }\n" +
		"  plain: {command: [mcp-plain]}\n"
	srvs, _, _, err := mcpLayers(t, user, "mcp:\n  files: {sandbox: {mode: read-only}}\n  plain: {sandbox: {mode: workspace-write}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := srvs[0].Sandbox; got.Mode != config.SandboxReadOnly || got.Net() != config.NetworkOff {
		t.Errorf("files' sandbox tightened by the project: %+v, want read-only without a network (the project's says none)", got)
	}
	if got := srvs[1].Sandbox; got.Mode != config.SandboxWorkspaceWrite {
		t.Errorf("plain's sandbox added by the project: %+v, want workspace-write", got)
	}
	srvs, _, _, err = mcpLayers(t, user, "mcp:\n  files: {sandbox: {mode: off}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := srvs[0].Sandbox; got.Mode != config.SandboxWorkspaceWrite || got.Net() != config.NetworkHost || len(got.Writable) != 1 {
		t.Errorf("files' sandbox after a project's mode off: %+v, want the user's", got)
	}
	for _, tt := range []struct{ text, want string }{
		{"mcp:\n  s:\n    url: https://h/mcp\n    sandbox: {mode: read-only}\n", "f.yaml:4: mcp.s.sandbox: an HTTP server runs elsewhere"},
		{"mcp:\n  s:\n    command: [a]\n    sandbox: {mode: read-only, network: proxy}\n", "mcp.s.sandbox.network: an MCP server's sandbox has no proxy"},
		{"mcp:\n  s:\n    command: [a]\n    sandbox: {network: off}\n", "f.yaml:4: mcp.s.sandbox: want a mode"},
		{"mcp:\n  s:\n    command: [a]\n    sandbox: {mode: read-only, escalate: ask}\n", "f.yaml:4: mcp.s.sandbox.escalate: unknown key"},
	} {
		if _, err := config.Parse("f.yaml", []byte(tt.text), gate.SourceUser); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.text, err, tt.want)
		}
	}
}
