package events

import "strings"

// SandboxProfile is the sandbox a run's commands run under, pinned in
// RunStarted: the configuration's profile tightened by the host's
// --sandbox floor (a mirror of config.SandboxProfile, which this package
// does not import). Absent: off, the host user's authority.
type SandboxProfile struct {
	Mode     string   `json:"mode"`
	Network  string   `json:"network,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	Writable []string `json:"writable,omitempty"`
	Denied   []string `json:"denied,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
}

// SandboxRecord is what the sandbox enforced on one call's command, and
// what the command asked of the network, recorded with its result.
type SandboxRecord struct {
	Mode        string   `json:"mode"`
	Network     string   `json:"network"`
	LandlockABI int      `json:"landlock_abi,omitempty"`
	Namespaces  []string `json:"namespaces,omitempty"`
	Seccomp     bool     `json:"seccomp,omitempty"`
	// Profile is the profile the command ran under on the host that ran
	// it: the run's pinned one (RunStarted.Sandbox) tightened by that
	// host's --sandbox floor, before the host's own denied paths and the
	// defaults. Absent in results recorded before it was.
	Profile *SandboxProfile `json:"profile,omitempty"`
	// Connections are the command's connections through the proxy
	// (network proxy), allowed or refused, in the order they ended.
	Connections []NetConnection `json:"connections,omitempty"`
	// Dropped counts the connections past the first ones recorded, so
	// that a command that connects without end cannot grow its commit
	// past what one message holds.
	Dropped int `json:"connections_dropped,omitempty"`
}

// NetConnection is one connection a sandboxed command asked the proxy for.
type NetConnection struct {
	Form      string `json:"form"` // connect, absolute, origin, invalid
	Authority string `json:"authority,omitempty"`
	IP        string `json:"ip,omitempty"`
	Verdict   string `json:"verdict"` // allowed, refused
	Code      string `json:"code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	BytesUp   int64  `json:"bytes_up,omitempty"`
	BytesDown int64  `json:"bytes_down,omitempty"`
}

// String says the profile as one line: "off", or its mode and network and
// the lists it sets ("workspace-write, network proxy (api.example.com:443),
// writable /srv/cache, denied /srv/keys, read-only /srv/app/.env").
func (p SandboxProfile) String() string {
	if p.Mode == "" || p.Mode == "off" {
		return "off"
	}
	s := p.Mode + ", network " + p.Network
	if p.Network == "" {
		s += "off"
	}
	if len(p.Allow) > 0 {
		s += " (" + strings.Join(p.Allow, ", ") + ")"
	}
	for _, l := range []struct {
		name  string
		items []string
	}{{"writable", p.Writable}, {"denied", p.Denied}, {"read-only", p.ReadOnly}} {
		if len(l.items) > 0 {
			s += ", " + l.name + " " + strings.Join(l.items, " ")
		}
	}
	return s
}
