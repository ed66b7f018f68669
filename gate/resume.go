package gate

import "github.com/stepgate/stepgate/descriptor"

// Resume decides again a call that waited for a human, when its ticket is
// answered: reqs are the permission requests the ticket holds, pinned the
// rules the run pinned when it started, current the configuration's rules
// for the run's agent and location as they are now, and saved the
// project's saved approvals that apply. Resuming never widens authority;
// the verdict is
//   - KindBlock when a request is denied by pinned alone or by current
//     alone ([EvaluateInput] without saved approvals): a deny in either
//     blocks, and no saved approval overrides it. Reason and Rule are those
//     [Decide] gives for the first such request, in request order, pinned
//     looked at before current.
//   - KindAllow when no request is blocked and each evaluates to allow
//     against pinned and saved ([EvaluateInput]) and none asks of itself
//     (Ask: a protected path, or a request the tool could not judge): the
//     call may be approved without a human, on behalf of another ticket's
//     "always". Reason and Rule are the deciding rule or saved approval of
//     the first request (nil when it names no resource, or there is none).
//   - KindConfirm otherwise: the call is still a human's to answer (one who
//     answers it approves it). Asked lists the requests that did not
//     evaluate to allow, in order, and Reason and Rule are the first one's.
//
// The order of rules within a ruleset is last-match-wins, as in
// [Evaluate]; the order of requests decides only which one the verdict
// names. The verdict's Rule points into pinned, current or saved.
func Resume(reqs []descriptor.Request, pinned, current, saved Ruleset) Verdict {
	for _, req := range reqs {
		for _, rs := range [2]Ruleset{pinned, current} {
			if d := EvaluateInput(req, rs, nil); d.Effect == Deny {
				return Verdict{Kind: KindBlock, Reason: reason("denied", req.Action, d), Rule: d.Rule}
			}
		}
	}
	var t tally
	for i, req := range reqs {
		d := EvaluateInput(req, pinned, saved)
		if req.Ask && d.Effect == Allow {
			d.Effect = Ask // never approved on another's behalf
		}
		t.saw(i, req, d)
		if d.Effect != Allow {
			t.asked = append(t.asked, req)
		}
	}
	return t.verdict(len(reqs))
}
