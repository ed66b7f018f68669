package config

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stepgate/stepgate/gate"
)

// MCPServer is one MCP server as a location's layers declare it. The
// values are as written: env and headers still hold their secret://
// references (resolve them with [Secrets.ResolveServer] at the moment of
// use, never into anything stored).
//
// A server is declared by one file (Source): the user's file, or the
// project's when the user's does not declare that name. A project file may
// narrow a server the user's file declares — deny_all, allow, a shorter
// ticket_ttl, trust: false, a stricter sandbox — but not replace how it is
// reached.
type MCPServer struct {
	Name string `json:"name"`
	// Command is a stdio server's program and arguments; Env is added to
	// its environment.
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL is a streamable-HTTP server's endpoint; Headers are sent with
	// every request.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Trust is whether the server's tool annotations decide their effect
	// classes: the user's file says so and no project file says false.
	Trust bool `json:"trust"`
	// DenyAll is whether any layer denies every tool of the server.
	DenyAll bool `json:"deny_all"`
	// Allow are the layers' allow-lists, each a list of tool names or
	// patterns; a tool is allowed when it matches one pattern of every
	// list (the intersection). None: every tool. See [MCPServer.Allows].
	Allow [][]string `json:"allow,omitempty"`
	// TicketTTL caps the deadline of tickets raised by the server's tools:
	// the shortest any layer gives; 0 when none does.
	TicketTTL time.Duration `json:"ticket_ttl,omitempty"`
	// Sandbox is the sandbox a stdio server's process runs in (mode and
	// network off or host, writable roots, denied paths): as its declaring
	// file says, tightened by every file that narrows it. Mode "" or off:
	// unsandboxed.
	Sandbox SandboxProfile `json:"sandbox,omitzero"`
	// Source is the file that declares the server; Narrowed are the later
	// files that narrow it.
	Source   string   `json:"source"`
	Narrowed []string `json:"narrowed_by,omitempty"`
	// Enabled is whether the host starts the server for this location; Why
	// says why not.
	Enabled bool   `json:"enabled"`
	Why     string `json:"why,omitempty"`
}

// Transport is "stdio" or "http".
func (s MCPServer) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Allows reports whether a run of this location may see and call the
// server's tool (its name as sanitised, without the mcp__SERVER__ prefix):
// not when the server is deny_all, and only when every allow-list has a
// pattern matching it ([gate.Match]).
func (s MCPServer) Allows(tool string) bool {
	if s.DenyAll {
		return false
	}
	for _, list := range s.Allow {
		if !slices.ContainsFunc(list, func(p string) bool { return gate.Match(p, tool) }) {
			return false
		}
	}
	return true
}

// Why a server is not started.
const (
	WhyProjectStdio = "declared by the project, not enabled by the user's file (add it to mcp_project_servers)"
	// WhyProject is WhyProjectStdio: it holds for HTTP servers as well (a
	// project would otherwise have the host POST to any URL it names).
	WhyProject     = WhyProjectStdio
	WhyUserDenyAll = "deny_all in the user's file"
)

// ResolveMCP combines the layers' MCP servers, sorted by name. A layer
// entry that names a server no earlier layer declares must declare it
// (command or url); one that names a declared server may only narrow it.
// The errors name the file and line of the entry.
func ResolveMCP(layers []*File) ([]MCPServer, error) {
	byName := map[string]*MCPServer{}
	var enabled []string
	for _, f := range layers {
		if f.source == gate.SourceUser {
			enabled = append(enabled, f.mcpProjectServers...)
		}
	}
	for _, f := range layers {
		for i := range f.mcp {
			d := &f.mcp[i]
			key := "mcp." + d.name
			srv, has := byName[d.name]
			if !has {
				if !d.transport() {
					return nil, &Error{File: f.Path, Line: d.line, Key: key, Msg: "declares neither command nor url, and the user's file declares no such server: a project file narrows only a server the user's file declares"}
				}
				byName[d.name] = declared(f, d, enabled)
				continue
			}
			if d.setsTransport() {
				return nil, &Error{File: f.Path, Line: d.line, Key: key, Msg: fmt.Sprintf("a project file may not replace the command, url, env or headers of server %q, which %s declares: it may narrow it (deny_all, allow, ticket_ttl, trust: false)", d.name, srv.Source)}
			}
			narrow(srv, f, d)
		}
	}
	out := make([]MCPServer, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out, nil
}

// declared is the server d declares in layer f.
func declared(f *File, d *mcpDecl, enabled []string) *MCPServer {
	srv := &MCPServer{
		Name: d.name, Command: slices.Clone(d.command), Env: maps.Clone(d.env),
		URL: d.url, Headers: maps.Clone(d.headers),
		Trust: d.trust, DenyAll: d.denyAll, TicketTTL: d.ticketTTL,
		Source: f.Path, Enabled: true, Sandbox: d.sandbox,
	}
	if d.allowSet {
		srv.Allow = [][]string{slices.Clone(d.allow)}
	}
	switch {
	case f.source != gate.SourceUser && !slices.Contains(enabled, d.name):
		// stdio or HTTP: a project's server would run a program, or have
		// the host send requests to any URL (loopback included), at run start
		srv.Enabled, srv.Why = false, WhyProject
	case f.source == gate.SourceUser && d.denyAll:
		srv.Enabled, srv.Why = false, WhyUserDenyAll
	}
	return srv
}

// narrow applies a later layer's narrowing entry d to srv.
func narrow(srv *MCPServer, f *File, d *mcpDecl) {
	srv.Narrowed = append(srv.Narrowed, f.Path)
	if d.trustSet && !d.trust {
		srv.Trust = false
	}
	srv.DenyAll = srv.DenyAll || d.denyAll
	if d.allowSet {
		srv.Allow = append(srv.Allow, slices.Clone(d.allow))
	}
	if d.ticketTTL > 0 && (srv.TicketTTL == 0 || d.ticketTTL < srv.TicketTTL) {
		srv.TicketTTL = d.ticketTTL
	}
	if d.sandbox.Mode != "" {
		srv.Sandbox = srv.Sandbox.Tighten(d.sandbox)
	}
}

// MCPServers are the MCP servers of location, as its layers declare them
// (see [ResolveMCP]).
func (l Loader) MCPServers(location string) ([]MCPServer, error) {
	layers, err := l.Layers(location)
	if err != nil {
		return nil, err
	}
	return ResolveMCP(layers)
}
