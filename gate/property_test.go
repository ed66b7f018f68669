package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"pgregory.net/rapid"
)

// Generators for the properties: small alphabets, so that patterns often match.

func genAction() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"read", "bash", "edit", "glob"})
}

func genActionPattern() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"*", "read", "bash", "re*", "?ash", "edit", "*t"})
}

func genEffect() *rapid.Generator[Effect] {
	return rapid.SampledFrom([]Effect{Allow, Deny, Ask})
}

func genSource() *rapid.Generator[Source] {
	return rapid.SampledFrom([]Source{SourceDefault, SourceUser, SourceProject, SourceSaved, SourceRun})
}

func genResource() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune("ab. ")), 0, 5, -1)
}

func genResourcePattern() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune("ab. *?")), 0, 5, -1)
}

func genRule() *rapid.Generator[Rule] {
	return rapid.Custom(func(t *rapid.T) Rule {
		return Rule{
			Action:   genActionPattern().Draw(t, "action"),
			Resource: genResourcePattern().Draw(t, "resource"),
			Effect:   genEffect().Draw(t, "effect"),
			Source:   genSource().Draw(t, "source"),
		}
	})
}

func genRuleset() *rapid.Generator[Ruleset] {
	return rapid.Custom(func(t *rapid.T) Ruleset {
		return Ruleset(rapid.SliceOfN(genRule(), 0, 8).Draw(t, "rules"))
	})
}

func genRequest() *rapid.Generator[descriptor.Request] {
	return rapid.Custom(func(t *rapid.T) descriptor.Request {
		return descriptor.Request{
			Action:    genAction().Draw(t, "action"),
			Resources: rapid.SliceOfN(genResource(), 0, 4).Draw(t, "resources"),
		}
	})
}

// matchingPattern draws a pattern that matches s.
func matchingPattern(t *rapid.T, label, s string) string {
	rs := []rune(s)
	cut := rapid.IntRange(0, len(rs)).Draw(t, label+"-cut")
	var p string
	switch rapid.IntRange(0, 4).Draw(t, label+"-shape") {
	case 0:
		p = s
	case 1:
		p = "*"
	case 2:
		p = string(rs[:cut]) + "*"
	case 3:
		p = "*" + string(rs[cut:])
	default:
		for i := range rs {
			if rapid.Bool().Draw(t, label+"-hide") {
				rs[i] = '?'
			}
		}
		p = string(rs)
	}
	if !Match(p, s) {
		t.Fatalf("Match(%q, %q) = false for a pattern built to match", p, s)
	}
	return p
}

func TestEvaluateLastMatchWins(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rulesets := rapid.SliceOfN(genRuleset(), 0, 3).Draw(t, "rulesets")
		action, resource := genAction().Draw(t, "request action"), genResource().Draw(t, "request resource")
		last := Rule{
			Action:   matchingPattern(t, "action", action),
			Resource: matchingPattern(t, "resource", resource),
			Effect:   genEffect().Draw(t, "effect"),
			Source:   genSource().Draw(t, "source"),
		}
		if len(rulesets) > 0 && rapid.Bool().Draw(t, "append to the last ruleset") {
			rulesets[len(rulesets)-1] = append(rulesets[len(rulesets)-1], last)
		} else {
			rulesets = append(rulesets, Ruleset{last})
		}
		got := Evaluate(action, resource, rulesets...)
		want := Decision{Effect: last.Effect, Rule: &last, Resource: resource}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("the appended matching rule did not decide (-want +got):\n%s", diff)
		}
	})
}

// specEvaluateInput is EvaluateInput written as the spec reads, flattening
// the saved rules onto a copy of the configured ones.
func specEvaluateInput(req descriptor.Request, configured, saved Ruleset) Decision {
	for _, res := range req.Resources {
		if d := Evaluate(req.Action, res, configured); d.Effect == Deny {
			return d
		}
	}
	flat := append(append(Ruleset{}, configured...), saved...)
	var firstAsk, first *Decision
	for _, res := range req.Resources {
		d := Evaluate(req.Action, res, flat)
		switch {
		case d.Effect == Deny:
			return d
		case d.Effect == Ask && firstAsk == nil:
			firstAsk = &d
		case first == nil:
			first = &d
		}
	}
	if firstAsk != nil {
		return *firstAsk
	}
	if first != nil {
		return *first
	}
	return Decision{Effect: Allow}
}

func TestEvaluateInputFollowsSpec(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		configured, saved := genRuleset().Draw(t, "configured"), genRuleset().Draw(t, "saved")
		req := genRequest().Draw(t, "request")
		got := EvaluateInput(req, configured, saved)
		want := specEvaluateInput(req, configured, saved)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("EvaluateInput(%+v) mismatch with the spec (-want +got):\n%s", req, diff)
		}
	})
}

func TestSavedApprovalNeverBeatsConfiguredDeny(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		configured, saved := genRuleset().Draw(t, "configured"), genRuleset().Draw(t, "saved")
		req := genRequest().Draw(t, "request")
		// Make the saved rules as permissive as can be for this request.
		for _, res := range req.Resources {
			saved = append(saved, savedRule(matchingPattern(t, "action", req.Action), matchingPattern(t, "resource", res)))
		}
		for _, res := range req.Resources {
			if Evaluate(req.Action, res, configured).Effect != Deny {
				continue
			}
			if got := EvaluateInput(req, configured, saved); got.Effect != Deny {
				t.Fatalf("configured rules deny %s %q, but EvaluateInput gave %+v", req.Action, res, got)
			}
			return
		}
	})
}
