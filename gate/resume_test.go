package gate

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"pgregory.net/rapid"
)

// Properties of Resume, the verdict on a call whose ticket is answered.

func genRequests() *rapid.Generator[[]descriptor.Request] {
	return rapid.Custom(func(t *rapid.T) []descriptor.Request {
		reqs := rapid.SliceOfN(genRequest(), 0, 3).Draw(t, "requests")
		for i := range reqs {
			reqs[i].Ask = rapid.Float64Range(0, 1).Draw(t, "ask") < 0.2
		}
		return reqs
	})
}

// genGrants draws saved approvals: allow rules of source saved.
func genGrants() *rapid.Generator[Ruleset] {
	return rapid.Custom(func(t *rapid.T) Ruleset {
		n := rapid.IntRange(0, 4).Draw(t, "grants")
		rs := make(Ruleset, n)
		for i := range rs {
			rs[i] = savedRule(genActionPattern().Draw(t, "action"), genResourcePattern().Draw(t, "resource"))
		}
		return rs
	})
}

// resumeCase is one draw of Resume's arguments.
type resumeCase struct {
	reqs                   []descriptor.Request
	pinned, current, saved Ruleset
}

func drawResume(t *rapid.T) resumeCase {
	return resumeCase{reqs: genRequests().Draw(t, "reqs"), pinned: genRuleset().Draw(t, "pinned"),
		current: genRuleset().Draw(t, "current"), saved: genGrants().Draw(t, "saved")}
}

func (c resumeCase) verdict() Verdict { return Resume(c.reqs, c.pinned, c.current, c.saved) }

// denied reports whether rs alone denies one of the requests' resources,
// read as the spec reads rules (the last matching rule decides).
func denied(reqs []descriptor.Request, rs Ruleset) bool {
	for _, req := range reqs {
		for _, res := range req.Resources {
			if Evaluate(req.Action, res, rs).Effect == Deny {
				return true
			}
		}
	}
	return false
}

// strictness orders verdicts block > confirm > allow.
func (k Kind) strictness() int {
	switch k {
	case KindAllow:
		return 0
	case KindConfirm:
		return 1
	}
	return 2
}

func TestResumeBlocksOnADenyAnywhere(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		v := c.verdict()
		want := denied(c.reqs, c.pinned) || denied(c.reqs, c.current)
		if got := v.Kind == KindBlock; got != want {
			t.Fatalf("Resume = %+v; a deny by the pinned or current rules: %v", v, want)
		}
		if v.Kind == KindBlock && (v.Rule == nil || v.Rule.Effect != Deny) {
			t.Fatalf("blocked without naming a deny rule: %+v", v)
		}
	})
}

func TestResumeGrantsNeverWidenPastADeny(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		// Grants as permissive as can be for every resource asked.
		for _, req := range c.reqs {
			for _, res := range req.Resources {
				c.saved = append(c.saved, savedRule(matchingPattern(t, "action", req.Action), matchingPattern(t, "resource", res)))
			}
		}
		without := Resume(c.reqs, c.pinned, c.current, nil)
		with := c.verdict()
		if (without.Kind == KindBlock) != (with.Kind == KindBlock) {
			t.Fatalf("grants changed a block: %+v without them, %+v with", without, with)
		}
		if without.Kind == KindBlock && !cmp.Equal(without, with) {
			t.Fatalf("grants changed why it blocks: %+v without them, %+v with", without, with)
		}
		asks := slices.ContainsFunc(c.reqs, func(r descriptor.Request) bool { return r.Ask })
		if with.Kind == KindAllow && asks {
			t.Fatalf("a request that always asks was approved: %+v", with)
		}
		if with.Kind == KindConfirm && !asks {
			t.Fatalf("grants for every resource asked, no deny, yet it still asks: %+v", with)
		}
	})
}

func TestResumeAddingADenyNeverLoosens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		before := c.verdict()
		deny := genRule().Draw(t, "deny")
		deny.Effect = Deny
		into := &c.pinned
		if rapid.Bool().Draw(t, "into current") {
			into = &c.current
		}
		at := rapid.IntRange(0, len(*into)).Draw(t, "at")
		*into = slices.Insert(slices.Clone(*into), at, deny)
		after := c.verdict()
		if after.Kind.strictness() < before.Kind.strictness() {
			t.Fatalf("a deny rule loosened the verdict: %s before, %s after", before.Kind, after.Kind)
		}
	})
}

func TestResumeAddingAGrantNeverTightens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		before := c.verdict()
		c.saved = append(slices.Clone(c.saved), genGrants().Draw(t, "more")...)
		after := c.verdict()
		if after.Kind.strictness() > before.Kind.strictness() {
			t.Fatalf("a grant tightened the verdict: %s before, %s after", before.Kind, after.Kind)
		}
	})
}

// The last matching rule decides: a rule matching everything appended to
// the pinned rules decides every request that the current rules and the
// requests themselves leave to it.
func TestResumeLastPinnedRuleDecides(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		last := Rule{Action: "*", Resource: "*", Effect: genEffect().Draw(t, "effect"), Source: SourceRun}
		c.pinned = append(slices.Clone(c.pinned), last)
		c.saved = nil
		v := c.verdict()
		hasResource := slices.ContainsFunc(c.reqs, func(r descriptor.Request) bool { return len(r.Resources) > 0 })
		asks := slices.ContainsFunc(c.reqs, func(r descriptor.Request) bool { return r.Ask })
		var want Kind
		switch {
		case last.Effect == Deny && hasResource || denied(c.reqs, c.current):
			want = KindBlock
		case last.Effect == Ask && hasResource || asks:
			want = KindConfirm
		default:
			want = KindAllow
		}
		if v.Kind != want {
			t.Fatalf("with %s appended: %+v, want %s", last, v, want)
		}
	})
}

// Without current rules, Resume is the verdict Decide gives the call
// against the pinned rules and the grants: kind, reason and rule.
func TestResumeWithoutCurrentRulesIsDecide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		got := Resume(c.reqs, c.pinned, nil, c.saved)
		want := Decide(Configured, c.reqs, c.pinned, c.saved)
		if got.Kind != want.Kind || got.Rule != want.Rule || got.Reason != want.Reason {
			t.Fatalf("Resume = %+v, Decide = %+v", got, want)
		}
	})
}

// The rule a verdict names is one of the rules it was given.
func TestResumeRuleComesFromItsArguments(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawResume(t)
		v := c.verdict()
		if v.Rule == nil {
			return
		}
		for _, rs := range []Ruleset{c.pinned, c.current, c.saved} {
			for i := range rs {
				if v.Rule == &rs[i] {
					return
				}
			}
		}
		t.Fatalf("verdict %+v names a rule it was not given", v)
	})
}

func TestResumeExamples(t *testing.T) {
	pinned := Ruleset{{Action: "bash", Resource: "*", Effect: Ask, Source: SourceProject}}
	current := Ruleset{{Action: "bash", Resource: "rm *", Effect: Deny, Source: SourceUser}}
	grant := Ruleset{savedRule("bash", "*")}
	rm := []descriptor.Request{{Action: "bash", Resources: []string{"ls", "rm -rf x"}}}
	ls := []descriptor.Request{{Action: "bash", Resources: []string{"ls"}}}
	tests := []struct {
		name         string
		reqs         []descriptor.Request
		saved        Ruleset
		kind         Kind
		reason, rule string
	}{
		{"the configuration now denies", rm, grant, KindBlock, `denied by rule bash "rm *" (user config)`, `bash "rm *"`},
		{"a grant allows", ls, grant, KindAllow, `allowed by rule bash "*" (saved approval)`, `bash "*"`},
		{"no grant: still asks", ls, nil, KindConfirm, `confirmation required by rule bash "*" (project config)`, `bash "*"`},
		{"a protected request is never approved for another", []descriptor.Request{{Action: "bash", Resources: []string{"ls"}, Ask: true}}, grant, KindConfirm, "", ""},
		{"no request", nil, nil, KindAllow, "no permission required", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Resume(tt.reqs, pinned, current, tt.saved)
			rule := ""
			if v.Rule != nil {
				rule = v.Rule.String()
			}
			if v.Kind != tt.kind || tt.reason != "" && (v.Reason != tt.reason || rule != tt.rule) {
				t.Fatalf("Resume = %s %q rule %s, want %s %q rule %s", v.Kind, v.Reason, rule, tt.kind, tt.reason, tt.rule)
			}
		})
	}
}
