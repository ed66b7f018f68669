package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stepgate/stepgate/gate"
)

// Loader finds a location's layers. The zero value reads no user file.
type Loader struct {
	// UserFile is the user's configuration; "" for none. See UserFile.
	UserFile string
	// ToolOutputDir is allowed to the build agent's external_directory.
	ToolOutputDir string
}

// UserFile is $XDG_CONFIG_HOME/stepgate/config.yaml (or ~/.config/…).
func UserFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "stepgate", "config.yaml")
}

// ProjectFile is a location's project configuration.
func ProjectFile(location string) string {
	return filepath.Join(location, ".stepgate", "config.yaml")
}

// Layers reads the layers for a location, lowest first: built-in, user,
// project. Missing files are left out; a malformed one is an error.
func (l Loader) Layers(location string) ([]*File, error) {
	builtin := Builtin(l.ToolOutputDir)
	builtin.alwaysProtected = userFileProtection(l.UserFile, location)
	layers := []*File{builtin}
	if err := plainProjectFile(location); err != nil {
		return nil, err
	}
	for _, src := range []struct {
		path   string
		source gate.Source
	}{{l.UserFile, gate.SourceUser}, {ProjectFile(location), gate.SourceProject}} {
		if src.path == "" {
			continue
		}
		f, err := Load(src.path, src.source)
		if err != nil {
			return nil, err
		}
		if f != nil {
			layers = append(layers, f)
		}
	}
	return layers, nil
}

// Effective is what the layers say for one agent.
type Effective struct {
	Agent    string       `json:"agent"`
	Rules    gate.Ruleset `json:"rules"`
	MaxLines int          `json:"max_lines"`
	MaxBytes int          `json:"max_bytes"`
	// TicketTTL is how long the agent's confirmations wait (the last layer
	// that says wins); 0 for as long as it takes.
	TicketTTL time.Duration `json:"ticket_ttl,omitempty"`
	// Files are the layers' files, lowest first.
	Files []string `json:"files"`
	// Protected are the protected paths; Rules ends with them as
	// protections (gate.SourceProtected).
	Protected []string `json:"protected_paths,omitempty"`
	// MCPServers are the location's MCP servers (see [ResolveMCP]), their
	// secret references unresolved.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// Resolve combines the layers for agent: its rules from every layer in
// order, then the protected paths as protections (the defaults and every
// layer's additions, less the user's removals), and the last layer's word
// on tool output. An agent no layer
// defines cannot be resolved: deny-all, with ok false.
func Resolve(agent string, layers []*File) (e Effective, ok bool) {
	e.Agent = agent
	for _, f := range layers {
		if rs, has := f.Agents[agent]; has {
			ok = true
			e.Rules = append(e.Rules, rs...)
		}
		if d, has := f.TicketTTL[agent]; has {
			e.TicketTTL = d
		}
		if f.MaxLines > 0 {
			e.MaxLines = f.MaxLines
		}
		if f.MaxBytes > 0 {
			e.MaxBytes = f.MaxBytes
		}
		if f.Path != "" {
			e.Files = append(e.Files, f.Path)
		}
	}
	if !ok {
		e.Rules = gate.DenyAllRules(gate.SourceDefault)
		return e, ok
	}
	e.Protected = protections(layers)
	e.Rules = append(e.Rules, protectionRules(e.Protected)...)
	return e, ok
}

// Effective resolves agent in location, and the location's MCP servers. A
// configuration that cannot be read, or whose MCP servers do not combine,
// resolves to deny-all — never ask, never allow — and the error says why.
func (l Loader) Effective(agent, location string) (Effective, error) {
	layers, err := l.Layers(location)
	if err != nil {
		return Effective{Agent: agent, Rules: gate.DenyAllRules(gate.SourceDefault)}, err
	}
	e, ok := Resolve(agent, layers)
	if !ok {
		return e, fmt.Errorf("agent %q: %w: no layer defines it (configuration files: %v)", agent, ErrInvalid, e.Files)
	}
	e.Rules = slices.Clip(e.Rules)
	if e.MCPServers, err = ResolveMCP(layers); err != nil {
		return Effective{Agent: agent, Rules: gate.DenyAllRules(gate.SourceDefault), Files: e.Files}, err
	}
	return e, nil
}
