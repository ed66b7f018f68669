package config

import (
	neturl "net/url"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// mcpDecl is one server entry of a layer's mcp: section, as decoded.
type mcpDecl struct {
	name    string
	line    int // the line of the server's key
	command []string
	env     map[string]string
	url     string
	headers map[string]string
	// trust is set when the entry says trust; a project file may only say
	// false.
	trust, trustSet bool
	denyAll         bool
	allow           []string
	allowSet        bool
	ticketTTL       time.Duration // 0 when the entry does not say
	// sandbox is the entry's sandbox for a stdio server's process; Mode ""
	// when it says none.
	sandbox SandboxProfile
}

// transport reports whether the entry declares how to reach the server.
func (d *mcpDecl) transport() bool { return d.command != nil || d.url != "" }

// setsTransport reports whether the entry says anything about reaching the
// server (command, url, env or headers).
func (d *mcpDecl) setsTransport() bool {
	return d.transport() || d.env != nil || d.headers != nil
}

// mcpSection is mcp: server name → entry, in file order.
type mcpSection []mcpDecl

func (m *mcpSection) decode(s state, n ast.Node) error {
	return entries(s, n, func(name string, kn, vn ast.Node) error {
		ss := s.child(name, kn)
		if !validServerName(name) {
			return ss.failKey("server name %q: want a letter, then up to 31 letters, digits, _ or -", name)
		}
		if strings.Contains(name, "__") || strings.HasSuffix(name, "_") {
			return ss.failKey("server name %q: may not contain __ or end with _ (tools are named mcp__<server>__<tool>: a__b's tool c would be a's tool b__c, a_'s tool x a's tool _x)", name)
		}
		var e mcpEntry
		if err := fields(ss, vn, &e, "unknown key (want command, env, url, headers, trust, deny_all, allow, ticket_ttl or sandbox)"); err != nil {
			return err
		}
		d, err := e.check(ss, vn)
		if err != nil {
			return err
		}
		d.name, d.line = name, line(kn)
		*m = append(*m, d)
		return nil
	})
}

// validServerName reports whether name matches ^[A-Za-z][A-Za-z0-9_-]{0,31}$.
func validServerName(name string) bool {
	if len(name) == 0 || len(name) > 32 {
		return false
	}
	for i := range len(name) {
		c := name[i]
		letter := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// mcpEntry is mcp.NAME.
type mcpEntry struct {
	// A stdio server: the program and its arguments (not with url).
	Command argv `yaml:"command"`
	// A stdio server's environment: name → value, which may hold
	// secret://NAME references (in the user's file only).
	Env stringMap `yaml:"env"`
	// An HTTP server's URL, http or https (not with command).
	URL serverURL `yaml:"url"`
	// An HTTP server's request headers: name → value, which may hold
	// secret://NAME references (in the user's file only).
	Headers stringMap `yaml:"headers"`
	// true: believe the server's readOnlyHint and idempotentHint for its
	// tools' effect classes (the user's file only; default: every tool
	// is side-effecting).
	Trust flag `yaml:"trust"`
	// true: declared but not callable (in the user's file: not started).
	DenyAll flag `yaml:"deny_all"`
	// The server's tools that are installed, by name or wildcard (default:
	// all).
	Allow toolPatterns `yaml:"allow"`
	// How long confirmations of the server's tools wait.
	TicketTTL positiveTTL `yaml:"ticket_ttl"`
	// A stdio server's process runs in the sandbox (opt-in; default: it
	// runs with the host user's authority). A project file may only
	// tighten the sandbox of a server the user's file declares.
	Sandbox mcpSandbox `yaml:"sandbox"`
}

// mcpSandbox is mcp.NAME.sandbox: the sandbox of a stdio server's process.
type mcpSandbox struct {
	// workspace-write (the server may write the writable roots, its
	// temporary directory and, when the project declares it, the run's
	// location), read-only (only its temporary directory) or off.
	Mode sandboxMode `yaml:"mode"`
	// off (loopback only, the default) or host (the host's network); a
	// server has no proxy.
	Network networkMode `yaml:"network"`
	// Extra directories the server may write under workspace-write
	// (absolute, or under ~).
	Writable pathList `yaml:"writable"`
	// Paths the server may neither read nor write, besides the defaults
	// (~/.ssh, ~/.aws, the engine's data directory, …).
	Denied pathList `yaml:"denied"`
	set    bool
	node   ast.Node
}

func (m *mcpSandbox) decode(s state, n ast.Node) error {
	if err := fields(s, n, m, "unknown key (want mode, network, writable or denied)"); err != nil {
		return err
	}
	switch {
	case !m.Mode.set:
		return s.fail(n, "want a mode: workspace-write, read-only or off")
	case m.Network.text == NetworkProxy:
		return s.child("network", nil).fail(n, "an MCP server's sandbox has no proxy: want off or host")
	case m.Mode.text == SandboxOff && m.Network.set:
		return s.fail(n, "network %q needs a sandbox: mode is off", m.Network.text)
	}
	m.set, m.node = true, n
	return nil
}

// profile is the section as a SandboxProfile.
func (m *mcpSandbox) profile() SandboxProfile {
	return SandboxProfile{Mode: m.Mode.text, Network: m.Network.text, Writable: m.Writable.items, Denied: m.Denied.items}
}

// check enforces the entry's shape — a stdio server (command, env) or an
// HTTP one (url, headers), never both — and what a project file may not
// say, and returns the declaration.
func (e *mcpEntry) check(s state, n ast.Node) (mcpDecl, error) {
	switch {
	case e.Command.set && e.URL.set:
		return mcpDecl{}, s.child("url", nil).fail(e.URL.node, "give command (a stdio server) or url (an HTTP server), not both")
	case e.Env.set && e.URL.set:
		return mcpDecl{}, s.child("env", nil).fail(e.Env.node, "env is for a stdio server (command); an HTTP server takes headers")
	case e.Headers.set && e.Command.set:
		return mcpDecl{}, s.child("headers", nil).fail(e.Headers.node, "headers are for an HTTP server (url); a stdio server takes env")
	case s.source != gate.SourceProject && !e.Command.set && !e.URL.set:
		return mcpDecl{}, s.fail(n, "want command (a stdio server) or url (an HTTP server)")
	case e.Env.set && !e.Command.set:
		return mcpDecl{}, s.child("env", nil).fail(e.Env.node, "env without command: a file may not change the environment of a server another file declares")
	case e.Headers.set && !e.URL.set:
		return mcpDecl{}, s.child("headers", nil).fail(e.Headers.node, "headers without url: a file may not change the headers of a server another file declares")
	case s.source == gate.SourceProject && e.Trust.set && e.Trust.v:
		return mcpDecl{}, s.child("trust", nil).fail(e.Trust.node, "a project file may not trust a server (its tools' annotations would decide their effect classes): trust belongs in the user's file")
	case e.Sandbox.set && e.URL.set:
		return mcpDecl{}, s.child("sandbox", nil).fail(e.Sandbox.node, "an HTTP server runs elsewhere: only a stdio server's process (command) runs in the sandbox")
	}
	return mcpDecl{
		command: e.Command.args, env: e.Env.m, url: e.URL.text, headers: e.Headers.m,
		trust: e.Trust.v, trustSet: e.Trust.set, denyAll: e.DenyAll.v,
		allow: e.Allow.pats, allowSet: e.Allow.set, ticketTTL: e.TicketTTL.d,
		sandbox: e.Sandbox.profile(),
	}, nil
}

// argv is a stdio server's command: the program and its arguments.
type argv struct {
	args []string
	set  bool
	node ast.Node
}

func (a *argv) decode(s state, n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return s.fail(n, "want a non-empty list: the program, then its arguments")
	}
	for i, item := range seq.Values {
		text, ok := scalar(item)
		if !ok {
			return s.index(i).fail(item, "want a plain value")
		}
		if i == 0 && text == "" {
			return s.index(i).fail(item, "the program may not be empty")
		}
		if hasSecretRef(text) {
			return s.index(i).fail(item, "a command may not hold a secret reference (another process could read it in the argument list): pass it in env")
		}
		a.args = append(a.args, text)
	}
	a.set, a.node = true, n
	return nil
}

// serverURL is an HTTP server's URL: http or https, with a host, no
// credentials and no secret reference.
type serverURL struct {
	text string
	set  bool
	node ast.Node
}

func (u *serverURL) decode(s state, n ast.Node) error {
	text, ok := scalar(n)
	if !ok {
		return s.fail(n, "want a URL")
	}
	if err := checkHTTPURL(s, n, text, false, "put it in a header", "put them in a header as a secret reference"); err != nil {
		return err
	}
	u.text, u.set, u.node = text, true, n
	return nil
}

// stringMap is env or headers: names to plain values, which may hold
// secret references (in the user's file only).
type stringMap struct {
	m    map[string]string
	set  bool
	node ast.Node
}

func (sm *stringMap) decode(s state, n ast.Node) error {
	header := strings.HasSuffix(s.key, ".headers")
	sm.m, sm.set, sm.node = map[string]string{}, true, n
	return entries(s, n, func(k string, kn, vn ast.Node) error {
		ks := s.child(k, kn)
		if header && !validHeaderName(k) {
			return ks.failKey("header name %q: want letters, digits and !#$%%&'*+-.^_`|~", k)
		}
		if !header && (k == "" || strings.ContainsAny(k, "=\x00")) {
			return ks.failKey("environment variable name %q: want a name without = or NUL", k)
		}
		v, ok := scalar(vn)
		if !ok {
			return ks.fail(vn, "want a plain value")
		}
		if strings.ContainsAny(v, "\r\n\x00") && header || strings.ContainsRune(v, 0) {
			return ks.fail(vn, "a value may not hold a line break or NUL")
		}
		if hasSecretRef(v) {
			if s.source == gate.SourceProject {
				return ks.fail(vn, "a project file may not use secret references (a project could send your secret to a server of its choosing): declare the server in the user's file")
			}
			if _, err := SecretRefs(v); err != nil {
				return ks.fail(vn, "%v", err)
			}
		}
		sm.m[k] = v
		return nil
	})
}

// validHeaderName reports whether k is an HTTP field name (a token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// flag is true or false.
type flag struct {
	v, set bool
	node   ast.Node
}

func (f *flag) decode(s state, n ast.Node) error {
	b, ok := n.(*ast.BoolNode)
	if !ok {
		return s.fail(n, "want true or false")
	}
	f.v, f.set, f.node = b.Value, true, n
	return nil
}

// toolPatterns is allow: a server's tool names (as sanitised: letters,
// digits, _ and -) or wildcard patterns of them, '*' and '?' as in
// [gate.Match].
type toolPatterns struct {
	pats []string
	set  bool
}

func (tp *toolPatterns) decode(s state, n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "want a list of tool names or patterns")
	}
	tp.pats, tp.set = []string{}, true
	for i, item := range seq.Values {
		text, ok := scalar(item)
		if !ok || text == "" || strings.Trim(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-*?") != "" {
			return s.index(i).fail(item, "want a tool name or pattern: letters, digits, _, - and the wildcards * and ?")
		}
		tp.pats = append(tp.pats, text)
	}
	return nil
}

// serverNames is mcp_project_servers: the project-declared servers (stdio
// or HTTP) the user's file lets the host start. The user's file only.
type serverNames struct {
	names []string
}

func (sn *serverNames) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may enable a project's servers (this is a %s file)", s.source.Label())
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "want a list of server names")
	}
	for i, item := range seq.Values {
		text, ok := scalar(item)
		if !ok || !validServerName(text) || strings.Contains(text, "__") || strings.HasSuffix(text, "_") {
			return s.index(i).fail(item, "want a server name: a letter, then up to 31 letters, digits, _ or - (no __, no _ at the end)")
		}
		sn.names = append(sn.names, text)
	}
	return nil
}

// secretsFile is secrets_file: the file secret references are also
// resolved from. The user's file only.
type secretsFile struct{ plain }

func (f *secretsFile) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may name a secrets file (this is a %s file)", s.source.Label())
	}
	if err := f.read(s, n, "want a path"); err != nil {
		return err
	}
	if f.text == "" {
		return s.fail(n, "want a path")
	}
	return nil
}

// checkHTTPURL refuses text, the value at n, unless it is an http or https
// URL with a host that holds no secret reference and no credentials (URLs
// are written in errors and logs) and, with noFragment, no fragment;
// secretHint and credHint say where a secret and credentials belong
// instead.
func checkHTTPURL(s state, n ast.Node, text string, noFragment bool, secretHint, credHint string) error {
	if hasSecretRef(text) {
		return s.fail(n, "a URL may not hold a secret reference (URLs are written in errors and logs): %s", secretHint)
	}
	p, err := neturl.Parse(text)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || noFragment && p.Fragment != "" {
		if noFragment {
			return s.fail(n, "want an http:// or https:// URL with a host and no fragment")
		}
		return s.fail(n, "want an http:// or https:// URL with a host")
	}
	if p.User != nil {
		return s.fail(n, "a URL may not hold credentials (URLs are written in errors and logs): %s", credHint)
	}
	return nil
}
