package gate

import (
	"slices"
	"strconv"

	"github.com/stepgate/stepgate/descriptor"
)

// DisabledReason is the reason of every verdict under [DenyAll].
const DisabledReason = "tools are disabled for this run"

// Kind is what happens to a tool call.
type Kind string

// The kinds of verdict.
const (
	KindAllow   Kind = "allow"   // the call runs
	KindBlock   Kind = "block"   // the call is refused
	KindConfirm Kind = "confirm" // the call waits for a human to confirm it
)

// Verdict is the decision on a whole tool call.
type Verdict struct {
	Kind Kind `json:"kind"`
	// Reason says why, for a person and for the model, e.g.
	// `denied by rule bash "rm *" (project config)`. Callers add any
	// prefix such as "blocked: " themselves.
	Reason string `json:"reason"`
	// Rule is the rule that decided (see [Decide]), or nil.
	Rule *Rule `json:"rule,omitempty"`
	// Asked lists, for KindConfirm, every request that asked, in order.
	Asked []descriptor.Request `json:"asked,omitempty"`
}

// Decide gives the verdict on a tool call that raised reqs.
//
// Under [DenyAll] (or any narrowing other than [Configured]) the call is
// blocked with [DisabledReason]. Otherwise each request is decided by
// [EvaluateInput] and the strictest wins, deny over ask over allow:
//   - KindBlock: Rule is the deny rule of the first denied request.
//   - KindConfirm: Asked holds every request that asked, in order, each
//     narrowed to the resources that ask (the human sees what no rule
//     allowed: of "git status; rm -rf x" under "git *": allow, only
//     "rm -rf x"; a request the tool could not judge keeps them all), and
//     Rule is the deciding rule of the first of them (nil when no rule
//     matched). The resources a protection covers ask in a request of their
//     own, with Ask set and no save pattern: "always" saves no approval for
//     a protected path, and no other ticket is approved on its behalf.
//   - KindAllow: Rule is the deciding rule of the first request (nil when
//     there is no request or the first names no resource).
//
// The verdict's Rule points into configured or saved.
func Decide(n Narrowing, reqs []descriptor.Request, configured, saved Ruleset) Verdict {
	if n != Configured {
		return Verdict{Kind: KindBlock, Reason: DisabledReason}
	}
	var t tally
	for i, req := range reqs {
		d := EvaluateInput(req, configured, saved)
		if req.Ask && d.Effect == Allow {
			d.Effect = Ask // the tool could not judge it: a human must
		}
		if d.Effect == Deny {
			return Verdict{Kind: KindBlock, Reason: reason("denied", req.Action, d), Rule: d.Rule}
		}
		t.saw(i, req, d)
		if d.Effect == Ask {
			t.asked = askingParts(t.asked, req, configured, saved)
		}
	}
	return t.verdict(len(reqs))
}

// tally gathers the decisions of a call's requests, none of them a deny,
// into the call's verdict (see [Decide] and [Resume]).
type tally struct {
	first, firstAsk        Decision
	firstAction, askAction string
	asked                  []descriptor.Request // what asked, as the caller records it
}

// saw notes decision d on request i, req: the first request's decides an
// allow, the first that asked (before anything asked) a confirm. The caller
// records what asked in t.asked after.
func (t *tally) saw(i int, req descriptor.Request, d Decision) {
	if d.Effect != Allow && t.asked == nil {
		t.firstAsk, t.askAction = d, req.Action
	}
	if i == 0 {
		t.first, t.firstAction = d, req.Action
	}
}

// verdict is confirm when a request asked, naming the first that did, and
// otherwise allow, naming the first request's deciding rule (n requests).
func (t *tally) verdict(n int) Verdict {
	if t.asked != nil {
		return Verdict{Kind: KindConfirm, Reason: reason("confirmation required", t.askAction, t.firstAsk), Rule: t.firstAsk.Rule, Asked: t.asked}
	}
	if n == 0 {
		return Verdict{Kind: KindAllow, Reason: "no permission required"}
	}
	return Verdict{Kind: KindAllow, Reason: reason("allowed", t.firstAction, t.first), Rule: t.first.Rule}
}

// reason explains decision d on action: which rule decided and where it came
// from, or that no rule matched.
func reason(verb, action string, d Decision) string {
	if d.Rule != nil {
		return verb + " by rule " + d.Rule.String() + " (" + d.Rule.Source.Label() + ")"
	}
	if d.Resource == "" && d.Effect == Allow {
		return verb + ": no resource requested for " + action
	}
	return verb + ": no rule matches " + action + " " + strconv.Quote(d.Resource)
}

// askingParts appends to dst req narrowed to the resources that ask on their
// own. Save patterns that are the resources themselves (bash saves each
// command's text) narrow with them, so "always" saves only what the human
// saw; other save patterns are the tool's choice and are kept. Resources a
// protection covers are split off into a request that always asks and saves
// nothing; a request the tool could not judge keeps its resources together,
// and saves nothing when one of them is protected.
func askingParts(dst []descriptor.Request, req descriptor.Request, configured, saved Ruleset) []descriptor.Request {
	if req.Ask || len(req.Resources) < 2 {
		if slices.ContainsFunc(req.Resources, func(res string) bool { return configured.Protects(req.Action, res) }) {
			req.Save, req.Ask = nil, true
		}
		return append(dst, req)
	}
	var asking, protected []string
	for _, res := range req.Resources {
		one := descriptor.Request{Action: req.Action, Resources: []string{res}, Root: req.Root}
		switch d := EvaluateInput(one, configured, saved); {
		case d.Effect == Ask && d.isProtection():
			protected = append(protected, res)
		case d.Effect == Ask:
			asking = append(asking, res)
		}
	}
	if slices.Equal(req.Save, req.Resources) {
		req.Save = asking
	}
	if asking != nil {
		req.Resources = asking
		dst = append(dst, req)
	}
	if protected != nil {
		dst = append(dst, descriptor.Request{Action: req.Action, Resources: protected, Ask: true, Root: req.Root})
	}
	return dst
}
