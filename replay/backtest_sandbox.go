package replay

import (
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
)

// SandboxResolver gives the sandbox profile a run's calls would run under,
// from the snapshot the run pinned when it started.
type SandboxResolver func(started events.RunStarted) config.SandboxProfile

// How a call's sandbox profile changes under the candidate (see
// [SandboxChange]).
const (
	// Tighter: the candidate's profile allows the call's tool nothing the
	// recorded one did not, and denies it something.
	Tighter = "tighter"
	// Looser: the candidate's profile allows the call's tool more than the
	// recorded one, and nothing less.
	Looser = "looser"
	// Different: tighter in one way and looser in another (another writable
	// root, say).
	Different = "different"
)

// SandboxChange is a call whose sandbox profile would change under the
// candidate: the profile it ran under (as its result recorded it) and the
// one it would run under, both as runs pin them, and which way it goes.
type SandboxChange struct {
	Before    events.SandboxProfile `json:"before"`
	After     events.SandboxProfile `json:"after"`
	Direction string                `json:"direction"`
}

// WithSandbox makes b compare the sandbox profile each call that ran
// under with the one resolve gives for its run: a difference that matters
// for the call's tool is a change (see [SandboxChange]). It returns b.
func (b *Backtest) WithSandbox(resolve SandboxResolver) *Backtest {
	b.sandbox = resolve
	return b
}

// sandboxState is what comparing a run's calls' profiles needs.
type sandboxState struct {
	pinned config.SandboxProfile // the run's, as RunStarted pinned it
	after  config.SandboxProfile // the candidate's
	// pending are the calls of a contained tool decided and not blocked
	// under the candidate, until their result.
	pending map[callKey]pendingCall
}

// pendingCall is a call waiting for its result, and its verdicts.
type pendingCall struct {
	tool     string
	old, new Decision
}

// startSandbox takes in the profiles of a run that pinned rs.
func (b *Backtest) startSandbox(st *runState, rs events.RunStarted) {
	if b.sandbox == nil {
		return
	}
	st.sandbox = &sandboxState{pinned: profileOf(rs.Sandbox), after: b.sandbox(rs).Tighten(config.SandboxProfile{}), pending: map[callKey]pendingCall{}}
}

// awaitResult notes a call decided in step step whose profile is compared
// once its result is read: a call of a tool the sandbox contains, not
// blocked as recorded nor under the candidate (a blocked call does not
// run at all).
func (st *runState) awaitResult(step int, call, tool string, old, new Decision) {
	if st.sandbox == nil || toolClass(tool) == notContained || old.Verdict == events.VerdictBlock || new.Verdict == events.VerdictBlock {
		return
	}
	st.sandbox.pending[callKey{step, call}] = pendingCall{tool: tool, old: old, new: new}
}

// resulted compares the profile of the call whose result r is (of step
// step of commit c) with the candidate's, and emits a change when they
// differ for its tool.
func (b *Backtest) resulted(seq uint64, c *events.Commit, st *runState, r events.ToolResultRecorded, emit func(Change)) {
	if st.sandbox == nil {
		return
	}
	k := callKey{c.Step, r.CallID}
	p, ok := st.sandbox.pending[k]
	if !ok {
		return
	}
	delete(st.sandbox.pending, k)
	before := st.sandbox.pinned
	switch rec := r.Sandbox; {
	case rec != nil && rec.Profile != nil:
		before = profileOf(rec.Profile)
	case rec != nil: // recorded before the record named its profile
		before.Mode, before.Network = rec.Mode, rec.Network
	}
	before = before.Tighten(config.SandboxProfile{})
	dir := direction(forTool(before, p.tool), forTool(st.sandbox.after, p.tool))
	if dir == "" {
		return
	}
	ch := Change{Seq: seq, At: c.At, Run: c.Run, Project: st.project, Step: c.Step, CallID: r.CallID, Tool: p.tool, Old: p.old, New: p.new,
		Sandbox: &SandboxChange{Before: pinnedOf(before), After: pinnedOf(st.sandbox.after), Direction: dir}}
	b.sum.Changed[ch.Kind()]++
	emit(ch)
}

// The tools a sandbox profile bears on, and how.
const (
	notContained = iota
	readsFiles   // read, glob, grep: the denied paths, under any sandbox
	writesFiles  // write, edit, apply_patch: the mode and every path list
	runsCommands // bash: all of the profile
)

// toolClass is how a profile bears on tool.
func toolClass(tool string) int {
	switch tool {
	case "bash":
		return runsCommands
	case "write", "edit", "apply_patch":
		return writesFiles
	case "read", "glob", "grep":
		return readsFiles
	}
	return notContained
}

// forTool is the part of p (normalised by Tighten) that bears on tool: a
// file tool reaches no network, and one that only reads is held to the
// denied paths alone, whichever sandbox mode.
func forTool(p config.SandboxProfile, tool string) config.SandboxProfile {
	if !p.Sandboxed() {
		return config.SandboxProfile{Mode: config.SandboxOff}
	}
	switch toolClass(tool) {
	case writesFiles:
		p.Network, p.Allow = config.NetworkOff, nil
	case readsFiles:
		p = config.SandboxProfile{Mode: config.SandboxReadOnly, Network: config.NetworkOff, Denied: p.Denied}
	}
	return p
}

// direction is how after differs from before: "" when it does not (each
// is at least as strict as the other), else Tighter, Looser or Different.
func direction(before, after config.SandboxProfile) string {
	tighter, looser := after.AtLeastAsStrict(before), before.AtLeastAsStrict(after)
	switch {
	case tighter && looser:
		return ""
	case tighter:
		return Tighter
	case looser:
		return Looser
	}
	return Different
}

// profileOf is a pinned profile as the configuration's (nil: off).
func profileOf(p *events.SandboxProfile) config.SandboxProfile {
	if p == nil {
		return config.SandboxProfile{Mode: config.SandboxOff}
	}
	return config.SandboxProfile{Mode: p.Mode, Network: p.Network, Allow: p.Allow, Writable: p.Writable, Denied: p.Denied, ReadOnly: p.ReadOnly}
}

// pinnedOf is a configuration's profile as a run pins it ("off" alone when
// it does not sandbox).
func pinnedOf(p config.SandboxProfile) events.SandboxProfile {
	if !p.Sandboxed() {
		return events.SandboxProfile{Mode: config.SandboxOff}
	}
	return events.SandboxProfile{Mode: p.Mode, Network: p.Net(), Allow: p.Allow, Writable: p.Writable, Denied: p.Denied, ReadOnly: p.ReadOnly}
}
