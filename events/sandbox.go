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
	// Escalate is "ask" when a call the sandbox refused asks to run again
	// outside it (see [Escalation]); absent: the refusal is the result.
	Escalate string `json:"escalate,omitempty"`
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
	// Refused is what the sandbox refused the call, when it refused
	// something (see [SandboxRefusal]).
	Refused *SandboxRefusal `json:"refused,omitempty"`
	// Escalated is the escalation ticket whose approval ran the call
	// outside the sandbox (Mode "off"); absent otherwise.
	Escalated string `json:"escalated,omitempty"`
}

// The kinds of a sandbox's refusal.
const (
	RefusedWrite      = "write"      // a write outside the writable roots, or to a read-only or denied path
	RefusedRead       = "read"       // a read of a denied path
	RefusedFilesystem = "filesystem" // a command's output says a file operation was not permitted (a heuristic)
	RefusedNetwork    = "network"    // a connection the proxy refused, or the network off
)

// SandboxRefusal is what the sandbox refused a call: a kind, one line
// saying what, and whether it was read from a command's output (a
// heuristic: the command failed and printed an EACCES, EPERM or EROFS
// message) rather than known exactly (a file tool's own refusal, the
// proxy's record of a connection).
type SandboxRefusal struct {
	Kind      string `json:"kind"`
	Detail    string `json:"detail"`
	Heuristic bool   `json:"heuristic,omitempty"`
}

// Escalation is what an escalation ticket (kind [TicketEscalation]) says:
// the call ran in the sandbox, the sandbox refused something, and a rule
// asks whether to run it again outside the sandbox.
type Escalation struct {
	// Reason says what the sandbox refused and that approving runs the
	// call again outside it.
	Reason  string         `json:"reason"`
	Refused SandboxRefusal `json:"refused"`
	// Attempt is the sandboxed attempt's result, as the model would have
	// read it (its text bounded): on a rejection it is the model's result,
	// with the rejection's message.
	Attempt ToolResultRecorded `json:"attempt"`
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
	if p.Escalate != "" {
		s += ", escalate " + p.Escalate
	}
	return s
}
