package config

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// sandboxSection is sandbox: the profile every agent's commands run under
// (agents.NAME.sandbox overrides it for one agent). A project file may
// only tighten it unless the user's file trusts the project, and the
// host's --sandbox is a floor no file loosens.
type sandboxSection struct {
	// off (the host user's authority, the default), workspace-write (the
	// location and the writable roots may be written, the rest read) or
	// read-only.
	Mode sandboxMode `yaml:"mode"`
	// What a sandboxed command may reach: off (loopback only, the
	// default), proxy (the hosts of allow, through a proxy) or host.
	Network networkMode `yaml:"network"`
	// With network proxy: the host:port a command may reach
	// ("*.example.com:443" for every name under example.com).
	Allow hostPorts `yaml:"allow"`
	// Extra directories a workspace-write command may write (absolute, or
	// under ~).
	Writable pathList `yaml:"writable"`
	// Paths a sandboxed command may neither read nor write, besides the
	// defaults (~/.ssh, ~/.aws, the engine's data directory, …).
	Denied pathList `yaml:"denied"`
	// Paths kept read-only even inside a writable root, besides the
	// defaults (.git/hooks, .git/config, .stepgate, shell start-up files).
	ReadOnly pathList `yaml:"read_only"`
	// off (the default: a call the sandbox refused has the refusal as its
	// result) or ask: such a call asks, on a ticket saying what was
	// refused, to run again outside the sandbox. The user's file only: a
	// project file may say off, never ask.
	Escalate escalateMode `yaml:"escalate"`
}

func (sb *sandboxSection) decode(s state, n ast.Node) error {
	if err := fields(s, n, sb, "unknown key"); err != nil {
		return err
	}
	if sb.Mode.text == SandboxOff && sb.Network.set {
		return s.fail(n, "network %q needs a sandbox: mode is off", sb.Network.text)
	}
	return nil
}

// escalateMode is a sandbox's escalation: off or ask.
type escalateMode struct{ plain }

func (m *escalateMode) decode(s state, n ast.Node) error {
	if err := m.oneOf(s, n, EscalateOff, EscalateAsk); err != nil {
		return err
	}
	if m.text == EscalateAsk && s.source == gate.SourceProject {
		return s.fail(n, "ask is the user's file's only: a project file may turn escalation off, never on")
	}
	return nil
}

// profile is the section as a SandboxProfile.
func (sb *sandboxSection) profile() SandboxProfile {
	return SandboxProfile{Mode: sb.Mode.text, Network: sb.Network.text, Allow: sb.Allow.items, Writable: sb.Writable.items, Denied: sb.Denied.items, ReadOnly: sb.ReadOnly.items,
		Escalate: sb.Escalate.text}
}

// sandboxMode is a sandbox's mode: off, workspace-write or read-only.
type sandboxMode struct{ plain }

func (m *sandboxMode) decode(s state, n ast.Node) error {
	return m.oneOf(s, n, SandboxOff, SandboxWorkspaceWrite, SandboxReadOnly)
}

// networkMode is a sandbox's network: off, proxy or host.
type networkMode struct{ plain }

func (m *networkMode) decode(s state, n ast.Node) error {
	return m.oneOf(s, n, NetworkOff, NetworkProxy, NetworkHost)
}

// oneOf reads n's text, which must be one of the words.
func (p *plain) oneOf(s state, n ast.Node, words ...string) error {
	want := "want " + strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
	if err := p.read(s, n, want); err != nil {
		return err
	}
	if !slices.Contains(words, p.text) {
		return s.fail(n, "%q: %s", p.text, want)
	}
	return nil
}

// hostPorts is a list of host:port, a host being a name, "*." and a name,
// or an IP address ([…] for IPv6); the proxy reads them again, strictly.
type hostPorts struct {
	items []string
	set   bool
}

func (h *hostPorts) decode(s state, n ast.Node) error {
	h.set, h.items = true, []string{}
	return eachItem(s, n, "want a list of host:port", func(is state, item ast.Node, text string) error {
		host, port, ok := cutHostPort(text)
		if p, err := strconv.Atoi(port); !ok || err != nil || p < 1 || p > 65535 || host == "" || strings.ContainsAny(host, " /@\x00") {
			return is.fail(item, "%q: want host:port (a port from 1 to 65535)", text)
		}
		h.items = append(h.items, strings.ToLower(text))
		return nil
	})
}

// cutHostPort splits "host:port" and "[v6]:port".
func cutHostPort(text string) (host, port string, ok bool) {
	if rest, found := strings.CutPrefix(text, "["); found {
		host, port, ok = strings.Cut(rest, "]:")
		return host, port, ok
	}
	i := strings.LastIndexByte(text, ':')
	if i < 0 {
		return "", "", false
	}
	return text[:i], text[i+1:], true
}

// pathList is a list of absolute paths (or paths under ~), cleaned.
type pathList struct {
	items []string
	set   bool
}

func (p *pathList) decode(s state, n ast.Node) error {
	p.set, p.items = true, []string{}
	return eachItem(s, n, "want a list of absolute paths", func(is state, item ast.Node, text string) error {
		if strings.ContainsAny(text, "*?[\x00") {
			return is.fail(item, "%q: want a path, without wildcards", text)
		}
		path := text
		if _, ok := gate.HomeRef(text); ok {
			var ok bool
			if path, ok = gate.ExpandHome(text, Home()); !ok {
				return is.fail(item, "%q names the home directory, and there is none (HOME is not set or not absolute)", text)
			}
		}
		if !filepath.IsAbs(path) {
			return is.fail(item, "%q: want an absolute path (or one under ~)", text)
		}
		p.items = append(p.items, filepath.Clean(path))
		return nil
	})
}

// eachItem calls fn for each plain item of the sequence n.
func eachItem(s state, n ast.Node, want string, fn func(is state, item ast.Node, text string) error) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "%s", want)
	}
	for i, item := range seq.Values {
		is := s.index(i)
		text, ok := scalar(item)
		if !ok || text == "" {
			return is.fail(item, "%s", want)
		}
		if err := fn(is, item, text); err != nil {
			return err
		}
	}
	return nil
}
