package gate

import "github.com/stepgate/stepgate/descriptor"

// Decision is the outcome of evaluating rules for one action and resource.
type Decision struct {
	// Effect is the effect of the deciding rule, or Ask when no rule matched.
	// A rule with an invalid effect decides Deny.
	Effect Effect `json:"effect"`
	// Rule is the rule that decided, or nil when none matched. It points into
	// the ruleset that was evaluated, which the caller must not modify while
	// it uses the decision.
	Rule *Rule `json:"rule,omitempty"`
	// Resource is the resource that was decided on.
	Resource string `json:"resource"`
}

// Evaluate decides one action on one resource. The rulesets are read as one
// list, in order, and the last rule whose action and resource patterns both
// match decides. When no rule matches, the decision is Ask with a nil Rule.
//
// Narrowing rules ([SourceProjectNarrowing]) are a list of their own, and
// the stricter decision holds (see "Rules that only narrow", narrowonly.go).
// Protections ([SourceProtected]) take no part in last-match-wins: a
// decision on a path one of them covers is raised to the protection's effect
// (ask), and a deny still denies.
//
// Evaluate does not allocate (unless a protection reads a path holding
// "..", which it cleans first).
func Evaluate(action, resource string, rulesets ...Ruleset) Decision {
	var o, n *Rule
	for i := len(rulesets) - 1; i >= 0; i-- {
		rulesets[i].scan(action, resource, false, &o, &n)
	}
	d, ok := combine(o, n, resource)
	if !ok {
		d = Decision{Effect: Ask, Resource: resource}
	}
	for _, rs := range rulesets {
		if d.Effect != Deny {
			d = rs.protect(action, d)
		}
	}
	return d
}

// decide returns the decision of the last rule of rs that matches (the
// narrowing rules apart, see [Evaluate]), and whether one judged.
func (rs Ruleset) decide(action, resource string) (Decision, bool) {
	return rs.decideIn(action, resource, false)
}

// decideIn is decide among the rules with an absolute resource pattern
// only, when absOnly (see [AbsolutePattern]).
func (rs Ruleset) decideIn(action, resource string, absOnly bool) (Decision, bool) {
	var o, n *Rule
	rs.scan(action, resource, absOnly, &o, &n)
	return combine(o, n, resource)
}

// EvaluateInput decides a permission request, which may name several
// resources, given the configured rules and the project's saved approvals
// (rules with Effect Allow and Source SourceSaved).
//
// If any resource evaluates to Deny against the configured rules alone, the
// result is Deny: a saved approval never overrides a configured deny.
// Otherwise every resource is evaluated with the saved rules appended after
// the configured ones: any Deny gives Deny, else any Ask gives Ask, else
// Allow. A request without resources is allowed, with a nil Rule.
//
// A request whose Root is set names paths: each relative resource is
// decided in its relative and its absolute form, the stricter holding, as
// "Path resources in two forms" (pathforms.go) says; so is a saved
// approval, which allows when it matches either form.
//
// The narrowing rules of configured ([SourceProjectNarrowing]) are decided
// apart from its other rules, in each form, the stricter holding (see
// [Evaluate]); a saved approval still beats their ask, never their deny.
//
// Then the protections of configured (see [SourceProtected]) raise each
// resource they cover to ask: no rule, saved approval or agent default lets
// a protected path be written without a human, and a deny still denies.
//
// The returned decision is that of the first resource, in request order,
// that reached the final effect; among resources that ask, a protected one
// is preferred, so the verdict says why it asks. EvaluateInput does not
// allocate (but as [Evaluate] says, and the absolute form of each relative
// resource of a request with Root).
func EvaluateInput(req descriptor.Request, configured, saved Ruleset) Decision {
	worst, found := Decision{Effect: Allow}, false
	protects := configured.protectsAction(req.Action)
	for _, res := range req.Resources {
		abs := absForm(req.Root, res)
		d, ok := configured.decideForms(req.Action, res, abs)
		if !ok {
			d = Decision{Effect: Ask, Resource: res}
		}
		if d.Effect == Deny {
			return d
		}
		if sd, ok := saved.decideForms(req.Action, res, abs); ok {
			d = sd
		}
		if protects {
			d = configured.protect(req.Action, d)
		}
		if !found || d.Effect.strictness() > worst.Effect.strictness() ||
			d.Effect == worst.Effect && d.isProtection() && !worst.isProtection() {
			worst, found = d, true
		}
	}
	return worst
}
