package gate

import (
	"strings"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
	"pgregory.net/rapid"
)

// formsRoot is the root of the requests the path-form properties draw.
const formsRoot = "/r"

// genFormsPattern draws resource patterns over relative and absolute paths
// under formsRoot, and elsewhere.
func genFormsPattern() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		body := rapid.StringOfN(rapid.RuneFrom([]rune("ab/*?")), 0, 5, -1).Draw(t, "body")
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return formsRoot + "/" + body
		case 1:
			return "/" + body
		default:
			return body
		}
	})
}

func genFormsRuleset() *rapid.Generator[Ruleset] {
	return rapid.Custom(func(t *rapid.T) Ruleset {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		rs := make(Ruleset, n)
		for i := range rs {
			rs[i] = Rule{Action: genActionPattern().Draw(t, "action"), Resource: genFormsPattern().Draw(t, "resource"),
				Effect: genEffect().Draw(t, "effect"), Source: genSource().Draw(t, "source")}
		}
		return rs
	})
}

// genRelPath draws a location-relative path as a tool names it: clean,
// "." for the location itself.
func genRelPath() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		if rapid.IntRange(0, 9).Draw(t, "root") == 0 {
			return "."
		}
		segs := rapid.SliceOfN(rapid.StringOfN(rapid.RuneFrom([]rune("ab")), 1, 3, -1), 1, 3).Draw(t, "segs")
		return strings.Join(segs, "/")
	})
}

// absPath is the absolute form of rel under formsRoot.
func absPath(rel string) string {
	if rel == "." {
		return formsRoot
	}
	return formsRoot + "/" + rel
}

// absOnly is rs without the rules whose resource pattern is relative.
func absOnly(rs Ruleset) Ruleset {
	var out Ruleset
	for _, r := range rs {
		if AbsolutePattern(r.Resource) {
			out = append(out, r)
		}
	}
	return out
}

// Matching a path in both forms is never more permissive than either form
// alone where that form is judged, and equals the form judged when only one
// is: the decision is the stricter of the relative form's (every rule) and
// the absolute form's (the absolute rules), each last-match-wins. The
// relative form is not judged — it abstains, and the decision is the
// absolute form's — when the rule deciding it does not deny, matches the
// absolute form as well (a rule about any path, such as "*"), and comes
// before the rule deciding the absolute form.
func TestBothFormsAreTheStricterForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := genFormsRuleset().Draw(t, "rules")
		action, rel := genAction().Draw(t, "action"), genRelPath().Draw(t, "path")
		got := EvaluateInput(descriptor.Request{Action: action, Resources: []string{rel}, Root: formsRoot}, rs, nil)
		dr := Evaluate(action, rel, rs)
		da := Evaluate(action, absPath(rel), absOnly(rs))
		ir, ia := lastJudging(rs, action, rel, false), lastJudging(rs, action, absPath(rel), true)
		if ir >= 0 && ia >= 0 && ir < ia && dr.Effect != Deny && Match(rs[ir].Resource, absPath(rel)) {
			if got.Effect != da.Effect || !sameRule(got.Rule, da.Rule) {
				t.Fatalf("the relative form abstains (%v before %v): got %+v, want the absolute form's %+v", rs[ir], rs[ia], got, da)
			}
			return
		}
		switch {
		case dr.Rule == nil && da.Rule == nil:
			if got.Effect != Ask || got.Rule != nil {
				t.Fatalf("neither form judged, got %+v, want ask with no rule", got)
			}
			return
		case dr.Rule != nil && got.Effect.strictness() < dr.Effect.strictness():
			t.Fatalf("both forms %s looser than the relative form %s (%v)", got.Effect, dr.Effect, dr.Rule)
		case da.Rule != nil && got.Effect.strictness() < da.Effect.strictness():
			t.Fatalf("both forms %s looser than the absolute form %s (%v)", got.Effect, da.Effect, da.Rule)
		case got.Rule == nil || !sameRule(got.Rule, dr.Rule) && !sameRule(got.Rule, da.Rule):
			t.Fatalf("decided by %v, which decided neither form (relative %v, absolute %v)", got.Rule, dr.Rule, da.Rule)
		}
		if e := got.Rule.Effect; e.Valid() && e != got.Effect {
			t.Fatalf("decision %s names a rule with effect %s", got.Effect, e)
		}
	})
}

// lastJudging is the index in rs of the last rule that judges res (only
// those with an absolute pattern when absolute), -1 for none: the property's
// own reading of last-match-wins.
func lastJudging(rs Ruleset, action, res string, absolute bool) int {
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if r.Source != SourceProtected && (!absolute || AbsolutePattern(r.Resource)) && Match(r.Action, action) && Match(r.Resource, res) {
			return i
		}
	}
	return -1
}

// A deny in either form denies, whatever the saved approvals; and saved
// approvals or a Root never make a request denied without them allowed or
// asked.
func TestADenyInEitherFormDenies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := genFormsRuleset().Draw(t, "rules")
		action := genAction().Draw(t, "action")
		rels := rapid.SliceOfN(genRelPath(), 1, 3).Draw(t, "paths")
		saved := Ruleset{savedRule("*", "*")}
		for _, rel := range rels {
			saved = append(saved, savedRule(action, absPath(rel)))
		}
		denied := false
		for _, rel := range rels {
			denied = denied || Evaluate(action, rel, rs).Effect == Deny || Evaluate(action, absPath(rel), absOnly(rs)).Effect == Deny
		}
		req := descriptor.Request{Action: action, Resources: rels, Root: formsRoot}
		got := EvaluateInput(req, rs, saved)
		if denied != (got.Effect == Deny) {
			t.Fatalf("a form denied: %v; EvaluateInput with every approval saved: %+v", denied, got)
		}
		if !denied && got.Effect != Allow {
			t.Fatalf("saved approvals for both forms, no deny, got %+v", got)
		}
		single := EvaluateInput(descriptor.Request{Action: action, Resources: rels}, rs, nil)
		if single.Effect == Deny && EvaluateInput(req, rs, nil).Effect != Deny {
			t.Fatalf("the relative form alone denies, both forms do not")
		}
	})
}

// "**/x" matches whatever "x" or "*/x" matches, and nothing else, after any
// prefix that ends in '/' (or none).
func TestDirectoryStarIsZeroOrMoreDirectories(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SampledFrom([]string{"", "/", "a/", "/r/", "*/", "a?/"}).Draw(t, "prefix")
		x := wildcardText().Draw(t, "x")
		s := wildcardText().Draw(t, "s")
		got := Match(prefix+"**/"+x, s)
		want := Match(prefix+x, s) || Match(prefix+"*/"+x, s)
		if got != want {
			t.Fatalf("Match(%q, %q) = %v, but %q or %q: %v", prefix+"**/"+x, s, got, prefix+x, prefix+"*/"+x, want)
		}
	})
}

// sameRule reports whether a and b are the same rule (by value: absOnly
// copies).
func sameRule(a, b *Rule) bool { return a != nil && b != nil && *a == *b }
