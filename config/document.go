package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// document is one YAML document of a configuration file, as decoded.
type document struct {
	// The agents and their rules: agent name → permission and ticket_ttl.
	// Built in: build (allows all but external directories and *.env)
	// and explore (read-only).
	Agents agents `yaml:"agents"`
	// Bounds on what the model reads of a tool's output; the rest is
	// spilled to a file it can page.
	ToolOutput toolOutput `yaml:"tool_output"`
	// The search service behind the websearch tool.
	Websearch websearch `yaml:"websearch"`
	// Paths every write asks for, whatever a rule allows.
	ProtectedPaths protectedPaths `yaml:"protected_paths"`
	// MCP servers whose tools go through the gate: server name → entry.
	MCP mcpSection `yaml:"mcp"`
	// The servers a project's file declares that the host may start (the
	// user's file only).
	MCPProjectServers serverNames `yaml:"mcp_project_servers"`
	// A YAML or JSON file of NAME: value that secret://NAME references are
	// resolved from after the environment; relative to the user's file
	// (the user's file only).
	SecretsFile secretsFile `yaml:"secrets_file"`
	// Webhooks: a list of receivers of tickets and runs' events (the
	// user's file only).
	Notify notifySection `yaml:"notify"`
	// The operators of the web inbox: name → token hash (the user's file
	// only).
	Operators operatorsSection `yaml:"operators"`
	// Locations whose project file layers like the user's instead of only
	// narrowing (the user's file only).
	TrustedProjects trustedProjects `yaml:"trusted_projects"`
	// The sandbox every agent's commands run under.
	Sandbox sandboxSection `yaml:"sandbox"`
	// The model providers engine agent speaks: openai or anthropic → API
	// key and endpoint (the user's file only).
	Providers providersSection `yaml:"providers"`
}

func (d *document) decode(s state, n ast.Node) error { return fields(s, n, d, "unknown key") }

// apply adds what the document says to the layer f. A server declared
// twice in one file (in two documents) is an error at the second.
func (d *document) apply(f *File) error {
	for _, m := range d.MCP {
		for _, prev := range f.mcp {
			if prev.name == m.name {
				return &Error{File: f.Path, Line: m.line, Key: "mcp." + m.name, Msg: fmt.Sprintf("server %q is declared twice in this file (first at line %d)", m.name, prev.line)}
			}
		}
		f.mcp = append(f.mcp, m)
	}
	f.mcpProjectServers = append(f.mcpProjectServers, d.MCPProjectServers.names...)
	f.notify = append(f.notify, d.Notify...)
	if err := f.applyProviders(d.Providers); err != nil {
		return err
	}
	if d.SecretsFile.set {
		f.secretsFile = d.SecretsFile.text
	}
	f.operators = append(f.operators, d.Operators.ops...)
	f.trustedProjects = append(f.trustedProjects, d.TrustedProjects.dirs...)
	for _, a := range d.Agents {
		if a.Permission.set { // only rules define an agent, not its ticket_ttl
			f.Agents[a.name] = append(f.Agents[a.name], a.Permission.rules...)
		}
		if a.TicketTTL.set {
			if f.TicketTTL == nil {
				f.TicketTTL = map[string]time.Duration{}
			}
			f.TicketTTL[a.name] = a.TicketTTL.d
		}
	}
	f.Sandbox = f.Sandbox.Over(d.Sandbox.profile())
	for _, a := range d.Agents {
		if sb := a.Sandbox.profile(); sb.Mode != "" || sb.Network != "" || sb.Allow != nil || sb.Writable != nil || sb.Denied != nil || sb.ReadOnly != nil || sb.Escalate != "" {
			if f.AgentSandbox == nil {
				f.AgentSandbox = map[string]SandboxProfile{}
			}
			f.AgentSandbox[a.name] = f.AgentSandbox[a.name].Over(sb)
		}
	}
	if d.ToolOutput.MaxLines.set {
		f.MaxLines = d.ToolOutput.MaxLines.n
	}
	if d.ToolOutput.MaxBytes.set {
		f.MaxBytes = d.ToolOutput.MaxBytes.n
	}
	if d.Websearch.Endpoint.set {
		f.WebsearchEndpoint = d.Websearch.Endpoint.text
	}
	f.ProtectAdd = append(f.ProtectAdd, d.ProtectedPaths.Add...)
	f.ProtectRemove = append(f.ProtectRemove, d.ProtectedPaths.Remove.paths...)
	return nil
}

// agents is the agents mapping, in file order.
type agents []agent

// agent is agents.NAME.
type agent struct {
	name string
	// The agent's rules: the shorthand mapping (action: effect, or
	// action: {resource: effect}) or a list of {action, resource, effect,
	// ticket_ttl}; the last matching rule decides.
	Permission permission `yaml:"permission"`
	// How long the agent's confirmations wait, e.g. 2h; the last layer
	// that says wins (a project's may only shorten it).
	TicketTTL positiveTTL `yaml:"ticket_ttl"`
	// The sandbox of this agent's commands: the keys of sandbox, over it.
	Sandbox sandboxSection `yaml:"sandbox"`
}

func (as *agents) decode(s state, n ast.Node) error {
	return entries(s, n, func(name string, kn, vn ast.Node) error {
		a := agent{name: name}
		if err := fields(s.child(name, kn), vn, &a, "unknown key"); err != nil {
			return err
		}
		*as = append(*as, a)
		return nil
	})
}

// positiveTTL is a positive duration such as 30m.
type positiveTTL struct {
	d   time.Duration
	set bool
}

func (t *positiveTTL) decode(s state, n ast.Node) error {
	text, _ := scalar(n)
	d, err := time.ParseDuration(text)
	if err != nil || d <= 0 {
		return s.fail(n, "want a positive duration such as 30m")
	}
	t.d, t.set = d, true
	return nil
}

// toolOutput is tool_output: the bounds on a tool's output.
type toolOutput struct {
	// The most lines of a tool's output the model reads (default 2000).
	MaxLines positiveCount `yaml:"max_lines"`
	// The most bytes of a tool's output the model reads (default 51200).
	MaxBytes positiveCount `yaml:"max_bytes"`
}

func (t *toolOutput) decode(s state, n ast.Node) error { return fields(s, n, t, "unknown key") }

// positiveCount is a positive whole number.
type positiveCount struct {
	n   int
	set bool
}

func (c *positiveCount) decode(s state, n ast.Node) error {
	text, ok := scalar(n)
	v, err := strconv.Atoi(text)
	if !ok || err != nil || v <= 0 {
		return s.fail(n, "want a positive whole number, got %q", text)
	}
	c.n, c.set = v, true
	return nil
}

// websearch is websearch: the search endpoint.
type websearch struct {
	// The URL that takes POST {"query", "num_results"}; set in the
	// user's file, it installs the websearch tool.
	Endpoint url `yaml:"endpoint"`
}

func (w *websearch) decode(s state, n ast.Node) error { return fields(s, n, w, "unknown key") }

// url is a plain value naming a URL.
type url struct{ plain }

func (u *url) decode(s state, n ast.Node) error { return u.read(s, n, "want a URL") }

// plain is a plain value (a rule's action, resource, effect or ticket_ttl in
// the list form).
type plain struct {
	text string
	set  bool
}

func (p *plain) decode(s state, n ast.Node) error { return p.read(s, n, "want a plain value") }

// read takes n's text, or fails saying want.
func (p *plain) read(s state, n ast.Node, want string) error {
	text, ok := scalar(n)
	if !ok {
		return s.fail(n, "%s", want)
	}
	p.text, p.set = text, true
	return nil
}
