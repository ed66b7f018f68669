package commands

import (
	"os"
	"slices"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/projection"
)

// pinnedSandbox is the profile a run pins (RunStarted.Sandbox); nil when
// it does not sandbox, as runs did before sandboxes.
func pinnedSandbox(p config.SandboxProfile) *events.SandboxProfile {
	if !p.Sandboxed() {
		return nil
	}
	sp := &events.SandboxProfile{Mode: p.Mode, Network: p.Net(), Allow: p.Allow, Writable: p.Writable, Denied: p.Denied, ReadOnly: p.ReadOnly}
	if p.Escalates() {
		sp.Escalate = config.EscalateAsk
	}
	return sp
}

// sandboxPolicy is a run's pinned profile, tightened by this host's own
// floor (Config.Sandbox: a host started with --sandbox contains every call
// it executes, whichever host started the run), as this host's sandbox
// policy for the run's calls: the location writable or not, the default
// read-only paths of the location and the denied paths of the home
// directory, this host's own secrets (Config.SandboxDenied), and the
// profile's; and the profile it is built from, as a call's result records
// it. Nil for a run that runs unsandboxed here.
func (b *base) sandboxPolicy(r *projection.RunHeader) (*sandbox.Policy, *events.SandboxProfile) {
	var pinned config.SandboxProfile
	if s := r.Snapshot.Sandbox; s != nil {
		pinned = config.SandboxProfile{Mode: s.Mode, Network: s.Network, Allow: s.Allow, Writable: s.Writable, Denied: s.Denied, ReadOnly: s.ReadOnly}
	}
	p := pinned.Tighten(b.cfg.Sandbox)
	if !p.Sandboxed() {
		return nil, nil
	}
	return b.policyFor(p, r.Snapshot.Location), pinnedSandbox(p)
}

// policyFor is profile p as this host's sandbox policy for commands in
// loc: p's paths, the defaults of loc and of the home directory, and this
// host's own secrets (Config.SandboxDenied) denied.
func (b *base) policyFor(p config.SandboxProfile, loc string) *sandbox.Policy {
	home, _ := os.UserHomeDir()
	pol := &sandbox.Policy{
		Mode: sandbox.Mode(p.Mode), Network: sandbox.Network(p.Net()), Allow: slices.Clone(p.Allow),
		Location: loc, Writable: slices.Clone(p.Writable),
		ReadOnly: append(sandbox.DefaultReadOnly(loc), p.ReadOnly...),
		Denied:   slices.Concat(b.cfg.SandboxDenied, p.Denied),
	}
	if home != "" {
		pol.Denied = append(sandbox.DefaultDenied(home), pol.Denied...)
	}
	return pol
}

// sandboxRecord is what the sandbox enforced on a call, as its result
// records it, with the connections its proxy saw.
func sandboxRecord(e *sandbox.Enforced, conns []events.NetConnection) *events.SandboxRecord {
	if e == nil {
		return nil
	}
	return &events.SandboxRecord{Mode: string(e.Mode), Network: string(e.Network), LandlockABI: e.LandlockABI,
		Namespaces: slices.Clone(e.Namespaces), Seccomp: e.Seccomp, Connections: conns}
}
