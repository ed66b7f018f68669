package replay

import (
	"slices"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

// Resolver gives the ruleset a run is re-decided against, from the snapshot
// the run pinned when it started.
type Resolver func(started events.RunStarted) gate.Ruleset

// Candidate is a configuration file standing in for the user's and the
// project's layers of every run it is applied to. Of a run's pinned rules
// it keeps, in the engine's order:
//   - the built-in defaults (source default) as the run pinned them, when
//     the agent is the run's own; for another agent, Builtin's;
//   - then File's rules for the agent (they replace every user and project
//     rule the run had);
//   - then the protections the run pinned, and any path File adds (a
//     candidate cannot lift a protection: protected_paths.remove is
//     ignored);
//   - then the run's own overrides (source run), which may only narrow.
//
// An agent neither layer defines is denied everything, as the engine does.
// So a candidate that says what the run's user and project files said
// yields the pinned ruleset itself, rule for rule.
type Candidate struct {
	// File is the candidate configuration.
	File *config.File
	// Agent is the agent whose rules apply; "" for each run's pinned agent.
	Agent string
	// Builtin is the built-in layer for an agent other than a run's own
	// (config.Builtin); nil for none.
	Builtin *config.File
	// Floor is the host's --sandbox floor the candidate's sandbox profile
	// is tightened by (see [Candidate.Sandbox]); zero: none.
	Floor config.SandboxProfile
}

// Sandbox resolves the candidate's sandbox profile for a run that pinned
// started, as a host would pin it: Builtin's then File's sandbox: and
// agents.NAME.sandbox: for the agent, each over the one before, tightened
// by Floor. It implements [SandboxResolver].
func (c Candidate) Sandbox(started events.RunStarted) config.SandboxProfile {
	agent := c.Agent
	if agent == "" {
		agent = started.Agent
	}
	var p config.SandboxProfile
	for _, f := range []*config.File{c.Builtin, c.File} {
		if f != nil {
			p = p.Over(f.Sandbox).Over(f.AgentSandbox[agent])
		}
	}
	return p.Tighten(c.Floor)
}

// Rules resolves the candidate for a run that pinned started. It
// implements [Resolver].
func (c Candidate) Rules(started events.RunStarted) gate.Ruleset {
	agent := c.Agent
	if agent == "" {
		agent = started.Agent
	}
	pinned := vocab.Rules(started.Rules)
	unresolved := slices.Equal(pinned, gate.DenyAllRules(gate.SourceDefault)) // the run's agent had no layer
	var out gate.Ruleset
	defined := false
	switch {
	case agent == started.Agent && !unresolved:
		for _, r := range pinned {
			if r.Source == gate.SourceDefault {
				out, defined = append(out, r), true
			}
		}
	case c.Builtin != nil:
		if rs, ok := c.Builtin.Agents[agent]; ok {
			out, defined = append(out, rs...), true
		}
	}
	if c.File != nil {
		if rs, ok := c.File.Agents[agent]; ok {
			out, defined = append(out, rs...), true
		}
	}
	if !defined {
		out = gate.DenyAllRules(gate.SourceDefault)
	} else {
		out = append(out, c.protections(pinned, unresolved)...)
	}
	for _, r := range pinned {
		if r.Source == gate.SourceRun {
			out = append(out, r)
		}
	}
	return out
}

// protections are the pinned protections and the paths the candidate adds
// (the default paths when the run had none pinned: its agent was
// unresolved).
func (c Candidate) protections(pinned gate.Ruleset, unresolved bool) gate.Ruleset {
	var out gate.Ruleset
	for _, r := range pinned {
		if r.Source == gate.SourceProtected {
			out = append(out, r)
		}
	}
	var add []string
	if unresolved {
		add = config.DefaultProtectedPaths()
	}
	if c.File != nil {
		add = append(add, c.File.ProtectAdd...)
	}
	for _, p := range add {
		if !slices.ContainsFunc(out, func(r gate.Rule) bool { return r.Resource == p }) {
			out = append(out, gate.Rule{Action: config.ProtectedAction, Resource: p, Effect: gate.Ask, Source: gate.SourceProtected})
		}
	}
	return out
}

// recordOf turns a gate rule into the log's vocabulary; nil for nil.
func recordOf(r *gate.Rule) *events.Rule {
	if r == nil {
		return nil
	}
	er := vocab.EventRule(*r)
	return &er
}
