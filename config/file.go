package config

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/stepgate/stepgate/gate"
)

// File is one configuration layer.
type File struct {
	// Path the layer was read from ("" for the built-in defaults).
	Path string
	// Agents maps an agent's name to its rules in this layer, in file order.
	Agents map[string]gate.Ruleset
	// TicketTTL maps an agent's name to how long its confirmations wait for
	// an answer (agents.NAME.ticket_ttl), when this layer says.
	TicketTTL map[string]time.Duration
	// MaxLines and MaxBytes bound tool output (tool_output.max_lines /
	// max_bytes); 0 when the layer does not say.
	MaxLines, MaxBytes int
	// WebsearchEndpoint is websearch.endpoint; "" when not set.
	WebsearchEndpoint string
	// Sandbox is the layer's sandbox section, and AgentSandbox each
	// agent's (agents.NAME.sandbox); unset fields when it says nothing.
	Sandbox      SandboxProfile
	AgentSandbox map[string]SandboxProfile
	// ProtectAdd and ProtectRemove are protected_paths.add and .remove:
	// path patterns (see gate.MatchPath) protected in addition to the
	// defaults, and defaults no longer protected. Only the user's file may
	// remove.
	ProtectAdd, ProtectRemove []string
	// alwaysProtected are protected whatever any file says (the user's
	// file itself).
	alwaysProtected []string
	// source is the layer's source (user or project; "" for the built-in).
	source gate.Source
	// mcp are the layer's MCP server entries, in file order (see
	// [MCPServer]).
	mcp []mcpDecl
	// mcpProjectServers are the project-declared servers (stdio or HTTP)
	// the user's file lets the host start (mcp_project_servers).
	mcpProjectServers []string
	// secretsFile is secrets_file as written (the user's file only).
	secretsFile string
	// base is the directory a relative secrets_file is relative to, when
	// it is not Path's (a fleet document's: the local user file's).
	base string
	// notify are the layer's webhooks (the user's file only).
	notify []Webhook
	// operators are the web app's operators (the user's file only).
	operators Operators
	// providers are engine agent's model providers (the user's file only).
	providers []Provider
	// trustedProjects are the locations whose project file the user's file
	// trusts (trusted_projects; see trust.go); trusted is set on a project
	// layer whose location is one of them.
	trustedProjects []string
	trusted         bool
}

// Load reads the file at path as a layer with the given source. A missing
// file is no layer (nil, nil). Only a regular file of at most
// [MaxFileBytes] is read, and its open never blocks; a project's file
// (gate.SourceProject) is not read through a symbolic link. Anything else —
// a named pipe, a device, a directory, a larger file — is refused at once
// with an [*Error] naming the file and why, and nothing of it is read.
func Load(path string, source gate.Source) (*File, error) {
	return load(path, source, source == gate.SourceProject)
}

// load is Load, following a final symbolic link unless nofollow.
func load(path string, source gate.Source, nofollow bool) (*File, error) {
	data, err := readFile(path, nofollow)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, data, source)
}

// ReadFile is the text of a configuration file the user names on a
// command line (replay's --policy, run's --rules), read as Load reads one:
// a regular file of at most MaxFileBytes, opened without blocking, or an
// [*Error] naming it and why. A symbolic link is followed (to a regular
// file, still); a missing file is an fs.ErrNotExist error.
func ReadFile(path string) ([]byte, error) {
	data, err := readFile(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read configuration %s: %w", path, err)
	}
	return data, err
}

// Parse reads one layer from YAML or JSON text.
//
//	agents:
//	  build:
//	    permission:
//	      "*": allow
//	      read: { "*": allow, "*.env": ask }
//	      bash: [{ resource: "git status *", effect: allow }]   # the list form
//	tool_output: { max_lines: 2000, max_bytes: 51200 }
//	websearch: { endpoint: "http://127.0.0.1:8080/search" }
//	protected_paths: { add: ["secrets/**"], remove: [".git/**"] }   # remove: the user's file only
//	mcp:
//	  files: { command: [mcp-files, --root, .], env: { TOKEN: "secret://FILES_TOKEN" } }
//	  search: { url: "https://mcp.example/mcp", headers: { Authorization: "Bearer secret://SEARCH" },
//	            trust: true, allow: ["query*"], ticket_ttl: 10m }
//	mcp_project_servers: [lint]   # the user's file only
//	secrets_file: secrets.yaml    # the user's file only; relative to it
//	notify:                       # the user's file only
//	  - { url: "https://hooks.example/stepgate", secret: "secret://HOOK_KEY",
//	      events: [ticket_issued, ticket_resolved, run_ended], include_args: false }
//	providers:                    # the user's file only; engine agent's key and endpoint
//	  openai: { api_key: "secret://OPENAI_KEY", base_url: "https://llm.example/v1" }
//
// Text longer than MaxFileBytes, or nested deeper than MaxNesting, is
// refused before it is parsed.
func Parse(path string, data []byte, source gate.Source) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, tooLarge(path, int64(len(data)))
	}
	f := &File{Path: path, Agents: map[string]gate.Ruleset{}, source: source}
	tree, err := parseYAML(path, data)
	var ce *Error
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, &Error{File: path, Line: syntaxLine(err), Key: "(document)", Msg: syntaxMsg(err)}
	}
	s := state{file: path, source: source, top: true}
	for _, d := range tree.Docs {
		if d.Body == nil {
			continue
		}
		var doc document
		if err := doc.decode(s, d.Body); err != nil {
			return nil, err
		}
		if err := doc.apply(f); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// syntaxMsg is the YAML parser's error as "[LINE:COLUMN] message", without
// the excerpt of the text its Error prints: rendering that excerpt takes
// time quadratic in the length of the line (an unclosed 256 KiB flow
// sequence: minutes), and the message would carry the line.
func syntaxMsg(err error) string {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return ye.FormatError(false, false)
	}
	return err.Error()
}

// syntaxLine is the line of the token the YAML parser stopped at; 0 when
// its error has none.
func syntaxLine(err error) int {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil || ye.GetToken().Position == nil {
		return 0
	}
	return ye.GetToken().Position.Line
}
