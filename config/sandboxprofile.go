package config

import (
	"slices"
)

// The sandbox profiles: what an allowed command may touch (see the
// sandbox package of the executor). Off is the default: the command runs
// with the host user's authority, as it always has.
const (
	SandboxOff            = "off"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxReadOnly       = "read-only"
)

// The sandbox's network modes: the host's network, an allow-list proxy,
// or none (loopback only).
const (
	NetworkHost  = "host"
	NetworkProxy = "proxy"
	NetworkOff   = "off"
)

// The sandbox's escalation: a call the sandbox refused finishes with the
// refusal (off, the default), or asks to run again outside the sandbox.
const (
	EscalateOff = "off"
	EscalateAsk = "ask"
)

// SandboxProfile is what a configuration says of the sandbox: a mode, a
// network, the proxy's allow-list, extra writable roots and paths denied
// or kept read-only. Plain data: the engine turns it into the sandbox's
// policy for a call. An empty Mode is not set (a layer that says nothing);
// a nil list is not set, an empty one is.
type SandboxProfile struct {
	Mode     string   `json:"mode,omitempty"`
	Network  string   `json:"network,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	Writable []string `json:"writable,omitempty"`
	Denied   []string `json:"denied,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
	// Escalate is EscalateAsk when a call the sandbox refused asks to run
	// again outside it; "" (not set) and EscalateOff: it does not.
	Escalate string `json:"escalate,omitempty"`
}

// Escalates reports whether a call the sandbox refused asks to run again
// outside it.
func (p SandboxProfile) Escalates() bool { return p.Sandboxed() && p.Escalate == EscalateAsk }

// modeRank and networkRank order the modes from the loosest.
func modeRank(m string) int {
	switch m {
	case SandboxWorkspaceWrite:
		return 1
	case SandboxReadOnly:
		return 2
	}
	return 0 // off, or not set
}

func networkRank(n string) int {
	switch n {
	case NetworkProxy:
		return 1
	case NetworkOff:
		return 2
	}
	return 0 // host, or not set
}

// Sandboxed reports whether the profile contains a command at all.
func (p SandboxProfile) Sandboxed() bool { return modeRank(p.Mode) > 0 }

// Net is the profile's network as it applies: the host's when the
// profile does not sandbox, else its own, off when it says none.
func (p SandboxProfile) Net() string {
	switch {
	case !p.Sandboxed():
		return NetworkHost
	case p.Network == "":
		return NetworkOff
	}
	return p.Network
}

// Over is p with the layer above, q, applied: what q sets replaces what p
// says (a user's file over the built-in, a trusted project over the
// user's), except the denied and read-only paths, which add up.
func (p SandboxProfile) Over(q SandboxProfile) SandboxProfile {
	out := p
	if q.Mode != "" {
		out.Mode = q.Mode
	}
	if q.Network != "" {
		out.Network = q.Network
	}
	if q.Allow != nil {
		out.Allow = slices.Clone(q.Allow)
	}
	if q.Writable != nil {
		out.Writable = slices.Clone(q.Writable)
	}
	if q.Escalate != "" {
		out.Escalate = q.Escalate
	}
	out.Denied = union(p.Denied, q.Denied)
	out.ReadOnly = union(p.ReadOnly, q.ReadOnly)
	return out
}

// Tighten is p made at least as strict as q: the stricter mode and
// network, only the hosts both let a command reach and only the roots
// both let it write, every path either denies or keeps read-only, and
// escalation off when q turns it off. A
// project's file that only narrows, and the host's --sandbox floor, are
// applied with it; what it returns is never looser than p or than q
// (TestTightenNeverLoosens).
func (p SandboxProfile) Tighten(q SandboxProfile) SandboxProfile {
	out := SandboxProfile{Mode: p.Mode, Denied: union(p.Denied, q.Denied), ReadOnly: union(p.ReadOnly, q.ReadOnly)}
	if modeRank(q.Mode) > modeRank(p.Mode) {
		out.Mode = q.Mode
	}
	out.Escalate = p.Escalate
	if q.Escalate == EscalateOff {
		out.Escalate = EscalateOff
	}
	if !out.Sandboxed() {
		return out
	}
	out.Network = p.Net()
	if networkRank(q.Net()) > networkRank(p.Net()) {
		out.Network = q.Net()
	}
	if out.Network == NetworkProxy {
		out.Allow = p.reach().and(q.reach()).items
	}
	if out.Mode == SandboxWorkspaceWrite {
		out.Writable = p.writes().and(q.writes()).items
	}
	return out
}

// AtLeastAsStrict reports whether p allows nothing q does not: a mode and
// a network as strict, no host and no writable root q does not allow, and
// every path q denies or keeps read-only, and escalation off when q
// turns it off.
func (p SandboxProfile) AtLeastAsStrict(q SandboxProfile) bool {
	if modeRank(p.Mode) < modeRank(q.Mode) || networkRank(p.Net()) < networkRank(q.Net()) {
		return false
	}
	if q.Escalate == EscalateOff && p.Escalate != EscalateOff {
		return false
	}
	if p.Net() == NetworkProxy && !p.reach().within(q.reach()) {
		return false
	}
	if p.Mode == SandboxWorkspaceWrite && !p.writes().within(q.writes()) {
		return false
	}
	return subset(q.Denied, p.Denied) && subset(q.ReadOnly, p.ReadOnly)
}

// set is a set of hosts or roots, or all of them.
type set struct {
	all   bool
	items []string
}

// reach is what a command may connect to: everything with the host's
// network, the allow-list through the proxy, nothing without a network.
func (p SandboxProfile) reach() set {
	switch p.Net() {
	case NetworkHost:
		return set{all: true}
	case NetworkProxy:
		return set{items: p.Allow}
	}
	return set{items: []string{}}
}

// writes is what a command may write besides the location and its private
// temporary directory: everything without a sandbox, the writable roots
// under workspace-write, nothing read-only.
func (p SandboxProfile) writes() set {
	switch p.Mode {
	case SandboxWorkspaceWrite:
		return set{items: p.Writable}
	case SandboxReadOnly:
		return set{items: []string{}}
	}
	return set{all: true}
}

// and is the intersection of a and b.
func (a set) and(b set) set {
	switch {
	case a.all:
		return set{all: b.all, items: slices.Clone(b.items)}
	case b.all:
		return set{items: slices.Clone(a.items)}
	}
	out := set{items: []string{}}
	for _, s := range b.items {
		if slices.Contains(a.items, s) {
			out.items = append(out.items, s)
		}
	}
	return out
}

// within reports whether a allows nothing b does not.
func (a set) within(b set) bool {
	if b.all {
		return true
	}
	return !a.all && subset(a.items, b.items)
}

// union is a's items then b's that a lacks; nil when both are nil.
func union(a, b []string) []string {
	if a == nil && b == nil {
		return nil
	}
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// subset reports whether every item of a is in b.
func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}
