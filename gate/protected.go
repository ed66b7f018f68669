package gate

// Protections.
//
// A rule whose Source is [SourceProtected] is a protection: its Resource is a
// path pattern ([MatchPath], not [Match]) and its Effect a floor. It takes no
// part in last-match-wins: whatever the ordinary rules and saved approvals
// decide, a request on a path a protection covers is decided at least as
// strictly as the protection says (ask, from the configuration), and a deny
// still denies. So "edit: allow", a saved "edit *" or an agent that allows
// everything still ask before .stepgate/config.yaml is written, and the
// request that asks saves nothing on "always" (see [Decide]).

// protected returns the strictest protection of rs covering action on
// resource, or nil. It does not allocate unless resource holds "..".
func (rs Ruleset) protected(action, resource string) *Rule {
	var found *Rule
	for i := range rs {
		r := &rs[i]
		if r.Source != SourceProtected || !Match(r.Action, action) || !MatchPath(r.Resource, resource) {
			continue
		}
		if found == nil || r.Effect.strictness() > found.Effect.strictness() {
			found = r
		}
	}
	return found
}

// protectsAction reports whether a protection of rs may cover action at
// all: most requests (bash, read) need not look at paths.
func (rs Ruleset) protectsAction(action string) bool {
	for i := range rs {
		if r := &rs[i]; r.Source == SourceProtected && Match(r.Action, action) {
			return true
		}
	}
	return false
}

// protect raises d, decided on resource, to the protection of rs that covers
// it, when that is at least as strict: the decision then names the
// protection, so the verdict says why it asks.
func (rs Ruleset) protect(action string, d Decision) Decision {
	p := rs.protected(action, d.Resource)
	if p == nil {
		return d
	}
	e := p.Effect
	if !e.Valid() {
		e = Deny
	}
	if e.strictness() < d.Effect.strictness() || e == Allow {
		return d
	}
	return Decision{Effect: e, Rule: p, Resource: d.Resource}
}

// isProtection reports whether d was decided by a protection.
func (d Decision) isProtection() bool {
	return d.Rule != nil && d.Rule.Source == SourceProtected
}

// Protects reports whether a protection of rs covers action on resource.
func (rs Ruleset) Protects(action, resource string) bool {
	return rs.protected(action, resource) != nil
}
