package commands

import (
	"sync/atomic"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// runConfig is what deciding a call needs from a run, converted once per run
// (and again only when its catalogue changes) rather than on every step.
type runConfig struct {
	fingerprint string
	agent       string
	location    string
	project     string
	policy      string        // digest of the pinned ruleset
	ttl         time.Duration // how long tickets wait; 0 for ever
	limits      executor.Limits
	rules       gate.Ruleset
	records     []events.Rule // rules[i] as verdicts record it; shared, never modified
	narrowing   gate.Narrowing
	catalog     map[string]string      // advertised name → identity; shared, never modified
	mcp         []events.MCPServerPin  // the MCP servers the run may see; never modified
	place       *events.Place          // the location's identity; nil for a run started before placement
	contain     *sandbox.Policy        // the sandbox of its calls on this host; nil: unsandboxed; never modified
	profile     *events.SandboxProfile // the profile contain was built from; never modified
	escalate    *escalateTo            // how a call the sandbox refused asks to run outside it; nil: it does not

	// The shared values rules, records and catalog come from (see
	// sharedConfig): held so that they stay shared while this run is.
	converted *policy
	tools     *map[string]string

	shown atomic.Pointer[shownCatalog] // the catalogue materialize last computed (catalogFor)
}

// ruleRef returns rule as a verdict records it. A configured rule's record
// is shared by every verdict it decides; other rules (saved approvals) get
// their own.
func (c *runConfig) ruleRef(rule *gate.Rule) *events.Rule {
	for i := range c.rules {
		if &c.rules[i] == rule {
			return &c.records[i]
		}
	}
	return ruleRef(rule)
}

// config returns the run's decision inputs, from the cache when its
// catalogue fingerprint still matches; r is the run's header.
func (b *base) config(r *projection.RunHeader) *runConfig {
	if v, ok := b.configs.Load(r.ID); ok {
		if c := v.(*runConfig); c.fingerprint == r.Catalog.Fingerprint {
			return c
		}
	}
	c := &runConfig{
		fingerprint: r.Catalog.Fingerprint,
		agent:       r.Snapshot.Agent,
		location:    r.Snapshot.Location,
		project:     r.Snapshot.Project,
		policy:      r.Snapshot.PolicyDigest,
		ttl:         time.Duration(r.Snapshot.TicketTTLMs) * time.Millisecond,
		limits:      executor.Limits{MaxLines: r.Snapshot.Limits.MaxLines, MaxBytes: r.Snapshot.Limits.MaxBytes},
		narrowing:   gate.DenyAll, // a snapshot this build cannot read never widens authority
		converted:   b.shared.policyOf(r.Snapshot.Rules),
		tools:       b.shared.catalogOf(r.Catalog.Tools),
		mcp:         r.Snapshot.MCP,
		place:       r.Snapshot.Place,
	}
	c.contain, c.profile = b.sandboxPolicy(r)
	c.escalate = b.escalation(r, c)
	n := len(c.converted.rules)
	c.rules, c.records = c.converted.rules[:n:n], c.converted.records[:n:n] // an append copies
	c.catalog = *c.tools
	var nw gate.Narrowing
	if err := nw.UnmarshalText([]byte(r.Snapshot.Narrowing)); err == nil {
		c.narrowing = nw
	}
	b.configs.Store(r.ID, c)
	return c
}

// forget drops a run's cached configuration (the run ended).
func (b *base) forget(run string) { b.configs.Delete(run) }
