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
	// Fleet, when set, is the user's layer instead of UserFile's content
	// (engine serve --nats reads it from the cluster). UserFile still names
	// the local file: it stays protected from writes, and a relative
	// secrets_file is relative to its directory.
	Fleet *FleetDoc
}

// userLayer is the user's layer: Fleet's content when set, else the file
// UserFile names (nil when there is none).
func (l Loader) userLayer() (*File, error) {
	if l.Fleet != nil {
		f, err := l.Fleet.layer()
		if err != nil {
			return nil, err
		}
		f.base = filepath.Dir(l.UserFile)
		return f, nil
	}
	if l.UserFile == "" {
		return nil, nil
	}
	return Load(l.UserFile, gate.SourceUser)
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
	user, err := l.userLayer()
	if err != nil {
		return nil, err
	}
	if user != nil {
		layers = append(layers, user)
	}
	project, err := Load(ProjectFile(location), gate.SourceProject)
	if err != nil {
		return nil, err
	}
	if project != nil {
		layers = append(layers, project)
	}
	if p := layers[len(layers)-1]; p.source == gate.SourceProject && len(layers) > 2 {
		p.trusted = trusts(layers[1].trustedProjects, location)
	}
	return layers, nil
}

// Effective is what the layers say for one agent.
type Effective struct {
	Agent    string       `json:"agent"`
	Rules    gate.Ruleset `json:"rules"`
	MaxLines int          `json:"max_lines"`
	MaxBytes int          `json:"max_bytes"`
	// Sandbox is the profile the agent's commands run under, before the
	// host's --sandbox floor (see [SandboxProfile.Tighten]).
	Sandbox SandboxProfile `json:"sandbox,omitzero"`
	// TicketTTL is how long the agent's confirmations wait (the last layer
	// that says wins, but a project layer that narrows may only shorten
	// it); 0 for as long as it takes.
	TicketTTL time.Duration `json:"ticket_ttl,omitempty"`
	// Files are the layers' files, lowest first.
	Files []string `json:"files"`
	// ProjectLayer is "trusted" when the location's project file is a
	// layer like the user's (its location is in trusted_projects),
	// "narrowing" when it only narrows, "" when there is none.
	ProjectLayer string `json:"project_layer,omitempty"`
	// Protected are the protected paths; Rules ends with them as
	// protections (gate.SourceProtected).
	Protected []string `json:"protected_paths,omitempty"`
	// MCPServers are the location's MCP servers (see [ResolveMCP]), their
	// secret references unresolved.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// NotGranted is what a narrowing project layer asked for and did not
	// get (see [NotGranted]); only [Loader.Check] fills it.
	NotGranted []Refusal `json:"not_granted,omitempty"`
}

// The bounds on a tool's output when no layer sets tool_output: a host's
// defaults, and the most a project layer that narrows may ask for.
const (
	DefaultMaxLines = 2000
	DefaultMaxBytes = 51200
)

// Resolve combines the layers for agent: its rules from every layer in
// order, then the protected paths as protections (the defaults and every
// layer's additions, less the user's removals), and the last layer's word
// on tool output. An agent no layer defines cannot be resolved: deny-all,
// with ok false.
//
// A project layer the user's file does not trust only narrows: its rules
// are narrowing rules (gate.SourceProjectNarrowing: the stricter of their
// decision and the other layers' holds), it defines no agent the other
// layers do not, its ticket_ttl and its rules' only shorten the wait, and
// its tool_output only lowers the bounds (from [DefaultMaxLines] and
// [DefaultMaxBytes] when no other layer sets them).
func Resolve(agent string, layers []*File) (e Effective, ok bool) {
	e.Agent = agent
	for _, f := range layers {
		if f.Path != "" {
			e.Files = append(e.Files, f.Path)
		}
		if f.source == gate.SourceProject {
			e.ProjectLayer = "trusted"
		}
		if f.narrows() {
			e.ProjectLayer = "narrowing"
			e.narrowBy(agent, f, ok)
			e.Sandbox = e.Sandbox.Tighten(f.Sandbox).Tighten(f.AgentSandbox[agent])
			continue
		}
		e.Sandbox = e.Sandbox.Over(f.Sandbox).Over(f.AgentSandbox[agent])
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
	}
	if !ok {
		e.Rules = gate.DenyAllRules(gate.SourceDefault)
		return e, ok
	}
	e.Protected = protections(layers)
	e.Rules = append(e.Rules, protectionRules(e.Protected)...)
	return e, ok
}

// narrowBy applies f, a project layer that only narrows, for agent, which
// the layers below define or not: its rules as narrowing rules (a rule's
// ticket_ttl dropped when it is longer than the wait the layers below
// give), a shorter ticket_ttl, lower tool_output bounds.
func (e *Effective) narrowBy(agent string, f *File, defined bool) {
	if rs, has := f.Agents[agent]; has && defined {
		for _, r := range rs {
			r.Source = gate.SourceProjectNarrowing
			if r.TicketTTL != "" && e.TicketTTL > 0 {
				if d, err := time.ParseDuration(r.TicketTTL); err != nil || d > e.TicketTTL {
					r.TicketTTL = ""
				}
			}
			e.Rules = append(e.Rules, r)
		}
	}
	if d, has := f.TicketTTL[agent]; has && (e.TicketTTL == 0 || d < e.TicketTTL) {
		e.TicketTTL = d
	}
	e.MaxLines = lowerBound(e.MaxLines, f.MaxLines, DefaultMaxLines)
	e.MaxBytes = lowerBound(e.MaxBytes, f.MaxBytes, DefaultMaxBytes)
}

// lowerBound is the bound cur (0: def) lowered to asked when asked is set
// and lower.
func lowerBound(cur, asked, def int) int {
	if asked <= 0 {
		return cur
	}
	if cur <= 0 {
		cur = def
	}
	return min(cur, asked)
}

// Effective resolves agent in location, and the location's MCP servers. A
// configuration that cannot be read, or whose MCP servers do not combine,
// resolves to deny-all — never ask, never allow — and the error says why.
func (l Loader) Effective(agent, location string) (Effective, error) {
	layers, err := l.Layers(location)
	if err != nil {
		return Effective{Agent: agent, Rules: gate.DenyAllRules(gate.SourceDefault)}, err
	}
	return effective(agent, layers)
}

// effective is [Loader.Effective] of the layers read.
func effective(agent string, layers []*File) (Effective, error) {
	e, ok := Resolve(agent, layers)
	if !ok {
		if p := layers[len(layers)-1]; p.narrows() && p.definesAgent(agent) {
			return e, fmt.Errorf("agent %q: %w: only the project's file %s defines it, and the user's file does not trust the project (a project that is not in trusted_projects may only narrow an agent another layer defines)", agent, ErrInvalid, p.Path)
		}
		return e, fmt.Errorf("agent %q: %w: no layer defines it (configuration files: %v)", agent, ErrInvalid, e.Files)
	}
	e.Rules = slices.Clip(e.Rules)
	var err error
	if e.MCPServers, err = ResolveMCP(layers); err != nil {
		return Effective{Agent: agent, Rules: gate.DenyAllRules(gate.SourceDefault), Files: e.Files}, err
	}
	return e, nil
}
