package gate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"pgregory.net/rapid"
)

func protection(pattern string) Rule {
	return Rule{Action: "edit", Resource: pattern, Effect: Ask, Source: SourceProtected}
}

func TestDecideProtectedPaths(t *testing.T) {
	prot := Ruleset{protection(".stepgate/**"), protection(".git/**")}
	with := func(rs ...Rule) Ruleset { return append(append(Ruleset{}, rs...), prot...) }
	edit := func(res ...string) []descriptor.Request {
		return []descriptor.Request{{Action: "edit", Resources: res, Save: []string{"*"}}}
	}
	allowAll := Rule{Action: "*", Resource: "*", Effect: Allow, Source: SourceDefault}
	tests := []struct {
		why       string
		reqs      []descriptor.Request
		conf      Ruleset
		saved     Ruleset
		kind      Kind
		asked     []descriptor.Request
		reasonHas string
	}{
		{"an agent that allows everything asks for the project file", edit(".stepgate/config.yaml"), with(allowAll), nil, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{".stepgate/config.yaml"}, Ask: true}}, `rule edit ".stepgate/**" (protected path)`},
		{"edit: allow from the user asks for a hook", edit(".git/hooks/pre-commit"), with(Rule{Action: "edit", Resource: "*", Effect: Allow, Source: SourceUser}), nil, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{".git/hooks/pre-commit"}, Ask: true}}, "protected path"},
		{"a saved edit * asks for .git/config", edit(".git/config"), with(Rule{Action: "edit", Resource: "*", Effect: Ask, Source: SourceUser}),
			Ruleset{{Action: "edit", Resource: "*", Effect: Allow, Source: SourceSaved}}, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{".git/config"}, Ask: true}}, "protected path"},
		{"an ask rule and a protection: the protection is named, no save", edit(".git/config"), with(Rule{Action: "edit", Resource: "*", Effect: Ask, Source: SourceUser}), nil, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{".git/config"}, Ask: true}}, "protected path"},
		{"a deny still denies", edit(".git/config"), with(allowAll, Rule{Action: "edit", Resource: ".git/*", Effect: Deny, Source: SourceProject}), nil, KindBlock,
			nil, `denied by rule edit ".git/*" (project config)`},
		{"a patch: the plain file is allowed, the protected one asks alone", edit("main.go", ".Git/Config"), with(allowAll), nil, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{".Git/Config"}, Ask: true}}, "protected path"},
		{"a patch under edit: ask: the plain file saves, the protected one does not", edit("main.go", ".stepgate/x"), with(Rule{Action: "edit", Resource: "*", Effect: Ask, Source: SourceUser}), nil, KindConfirm,
			[]descriptor.Request{{Action: "edit", Resources: []string{"main.go"}, Save: []string{"*"}}, {Action: "edit", Resources: []string{".stepgate/x"}, Ask: true}}, "protected path"},
		{"a file elsewhere is allowed", edit("src/.stepgatex"), with(allowAll), nil, KindAllow, nil, "allowed by rule"},
		{"reading a protected path is not protected", []descriptor.Request{{Action: "read", Resources: []string{".git/config"}}}, with(allowAll), nil, KindAllow, nil, "allowed"},
		{"a request the tool could not judge keeps its resources, saves nothing", []descriptor.Request{{Action: "edit", Resources: []string{"a", ".git/config"}, Save: []string{"*"}, Ask: true}},
			with(allowAll), nil, KindConfirm, []descriptor.Request{{Action: "edit", Resources: []string{"a", ".git/config"}, Ask: true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			v := Decide(Configured, tt.reqs, tt.conf, tt.saved)
			if v.Kind != tt.kind {
				t.Fatalf("kind %s (%s), want %s", v.Kind, v.Reason, tt.kind)
			}
			if diff := cmp.Diff(tt.asked, v.Asked); diff != "" {
				t.Errorf("asked (-want +got):\n%s", diff)
			}
			if !strings.Contains(v.Reason, tt.reasonHas) {
				t.Errorf("reason %q does not say %q", v.Reason, tt.reasonHas)
			}
		})
	}
}

func TestProtectionsAreNoRules(t *testing.T) {
	rs := Ruleset{{Action: "edit", Resource: "*", Effect: Deny, Source: SourceUser}, protection(".git/**")}
	if !WhollyDenied("edit", rs) {
		t.Error("edit is wholly denied; a protection after the deny must not advertise it")
	}
	if d := Evaluate("edit", "x", Ruleset{{Action: "*", Resource: "*", Effect: Allow}, protection("x")}); d.Effect != Ask || !d.isProtection() {
		t.Errorf("Evaluate on a protected path = %+v, want ask by the protection", d)
	}
	if d := Evaluate("edit", "y", Ruleset{protection("x")}); d.Effect != Ask || d.Rule != nil {
		t.Errorf("Evaluate with only a protection that does not cover = %+v, want ask with no rule", d)
	}
	conf := Ruleset{{Action: "*", Resource: "*", Effect: Allow}, protection(".git/**"), protection(".stepgate/**")}
	req := descriptor.Request{Action: "edit", Resources: []string{"a/b.go", "vendor/.git/config"}}
	if n := testing.AllocsPerRun(100, func() { EvaluateInput(req, conf, nil) }); n != 0 {
		t.Errorf("EvaluateInput with protections allocates %v times", n)
	}
}

// Adding a protection never loosens a verdict: it can only turn allow into
// confirm, and what it turns into confirm saves nothing for the protected
// resources.
func TestProtectionOnlyNarrows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		conf, saved := genRuleset().Draw(t, "configured"), genRuleset().Draw(t, "saved")
		for i := range saved {
			saved[i].Effect, saved[i].Source = Allow, SourceSaved
		}
		reqs := rapid.SliceOfN(genRequest(), 0, 3).Draw(t, "requests")
		pat := rapid.SampledFrom([]string{"a", "**", "/b", "*a*", "a.*"}).Draw(t, "protected")
		before := Decide(Configured, reqs, conf, saved)
		after := Decide(Configured, reqs, append(conf.clone(), protection(pat)), saved)
		rank := map[Kind]int{KindAllow: 0, KindConfirm: 1, KindBlock: 2}
		if rank[after.Kind] < rank[before.Kind] {
			t.Fatalf("a protection loosened %s to %s", before.Kind, after.Kind)
		}
		if before.Kind == KindBlock && after.Kind != KindBlock {
			t.Fatalf("a deny no longer denies: %s", after.Reason)
		}
		for _, a := range after.Asked {
			for _, res := range a.Resources {
				if a.Action == "edit" && MatchPath(pat, res) && len(a.Save) > 0 {
					t.Fatalf("a protected resource %q is asked with save patterns %v", res, a.Save)
				}
			}
		}
	})
}

func (rs Ruleset) clone() Ruleset { return append(Ruleset(nil), rs...) }
