package gate

// Rules that only narrow.
//
// A rule whose Source is [SourceProjectNarrowing] comes from a project file
// the user's file does not trust. Such rules take no part in the other
// rules' last-match-wins: they are a list of their own, decided
// last-match-wins among themselves, and the stricter of the two decisions
// holds (deny, then ask, then allow). A narrowing allow grants nothing: where
// no other rule matches, the request still asks, as no rule matching does.
// So a project's ask and deny rules work as written, and its allow rules
// only carve exceptions out of its own asks and denies: with narrowing rules
// added, a decision is never looser than without them, which
// TestNarrowingNeverLoosens checks for random rulesets and requests.

// scan updates o and n, the last ordinary rule and the last narrowing rule
// matching action and resource found so far, with the rules of rs (the
// later ones first), among the rules with an absolute resource pattern only
// when absOnly. Protections are neither. It stops when both are found.
func (rs Ruleset) scan(action, resource string, absOnly bool, o, n **Rule) {
	for i := len(rs) - 1; i >= 0 && (*o == nil || *n == nil); i-- {
		r := &rs[i]
		narrows := r.Source == SourceProjectNarrowing
		if narrows && *n != nil || !narrows && *o != nil || r.Source == SourceProtected ||
			absOnly && !AbsolutePattern(r.Resource) {
			continue
		}
		if Match(r.Action, action) && Match(r.Resource, resource) {
			if narrows {
				*n = r
			} else {
				*o = r
			}
		}
	}
}

// combine is the decision on resource of o, the deciding ordinary rule,
// and n, the deciding narrowing rule (either nil when none matched), and
// whether either judged: n decides only when it is stricter than o, or when
// o is nil and n asks or denies. The rule that decides is named.
func combine(o, n *Rule, resource string) (Decision, bool) {
	switch {
	case n == nil || effectOf(n) == Allow:
		if o == nil {
			return Decision{}, false
		}
	case o == nil || effectOf(n).strictness() > effectOf(o).strictness():
		o = n
	}
	return Decision{Effect: effectOf(o), Rule: o, Resource: resource}, true
}

// effectOf is r's effect; an invalid one is Deny, so a malformed rule fails
// closed.
func effectOf(r *Rule) Effect {
	if !r.Effect.Valid() {
		return Deny
	}
	return r.Effect
}
