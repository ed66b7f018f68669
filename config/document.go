package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// document is one YAML document of a configuration file, as decoded.
type document struct {
	Agents         agents         `yaml:"agents"`
	ToolOutput     toolOutput     `yaml:"tool_output"`
	Websearch      websearch      `yaml:"websearch"`
	ProtectedPaths protectedPaths `yaml:"protected_paths"`
	MCP            mcpSection     `yaml:"mcp"`
	// MCPProjectServers and SecretsFile: the user's file only.
	MCPProjectServers serverNames `yaml:"mcp_project_servers"`
	SecretsFile       secretsFile `yaml:"secrets_file"`
	// Notify: the user's file only (see notify.go).
	Notify notifySection `yaml:"notify"`
	// Operators: the user's file only (see operators.go).
	Operators operatorsSection `yaml:"operators"`
	// TrustedProjects: the user's file only (see trust.go).
	TrustedProjects trustedProjects `yaml:"trusted_projects"`
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
	name       string
	Permission permission  `yaml:"permission"`
	TicketTTL  positiveTTL `yaml:"ticket_ttl"`
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
	MaxLines positiveCount `yaml:"max_lines"`
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
