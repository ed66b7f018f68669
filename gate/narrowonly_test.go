package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"pgregory.net/rapid"
)

// narrowing marks rules as narrowing rules (a copy).
func narrowing(rs ...Rule) Ruleset {
	out := make(Ruleset, len(rs))
	for i, r := range rs {
		r.Source = SourceProjectNarrowing
		out[i] = r
	}
	return out
}

func TestNarrowingRules(t *testing.T) {
	r := func(action, resource string, e Effect, s Source) Rule {
		return Rule{Action: action, Resource: resource, Effect: e, Source: s}
	}
	userAsk := r("bash", "*", Ask, SourceUser)
	userDenyRm := r("bash", "rm *", Deny, SourceUser)
	allowAll := r("*", "*", Allow, SourceDefault)
	extAsk := r("external_directory", "*", Ask, SourceDefault)
	pAllow := narrowing(r("bash", "*", Allow, ""))[0]
	pAllowAll := narrowing(r("*", "*", Allow, ""))[0]
	pDeny := narrowing(r("bash", "curl *", Deny, ""))[0]
	pAsk := narrowing(r("bash", "*", Ask, ""))[0]
	pDenyAll := narrowing(r("bash", "*", Deny, ""))[0]
	pGit := narrowing(r("bash", "git *", Allow, ""))[0]
	pBad := narrowing(r("bash", "*", "maybe", ""))[0]
	tests := []struct {
		why              string
		action, resource string
		rules            Ruleset
		want             Decision
	}{
		{"a project's allow does not loosen the user's ask", "bash", "make", Ruleset{allowAll, userAsk, pAllow},
			Decision{Ask, &userAsk, "make"}},
		{"a project's \"*\": allow does not re-allow the built-in external_directory ask", "external_directory", "/etc/x", Ruleset{allowAll, extAsk, pAllowAll},
			Decision{Ask, &extAsk, "/etc/x"}},
		{"a project's deny narrows", "bash", "curl x", Ruleset{allowAll, pDeny},
			Decision{Deny, &pDeny, "curl x"}},
		{"a project's ask narrows", "bash", "ls", Ruleset{allowAll, pAsk},
			Decision{Ask, &pAsk, "ls"}},
		{"a project's ask does not turn the user's deny into ask", "bash", "rm -rf x", Ruleset{allowAll, userDenyRm, pAsk},
			Decision{Deny, &userDenyRm, "rm -rf x"}},
		{"a project's allow does not turn the user's deny into allow", "bash", "rm -rf x", Ruleset{allowAll, userDenyRm, pAllow},
			Decision{Deny, &userDenyRm, "rm -rf x"}},
		{"a project's allow carves an exception out of its own deny", "bash", "git status", Ruleset{allowAll, pDenyAll, pGit},
			Decision{Allow, &allowAll, "git status"}},
		{"... and the rest stays denied", "bash", "make", Ruleset{allowAll, pDenyAll, pGit},
			Decision{Deny, &pDenyAll, "make"}},
		{"the exception grants nothing the other rules ask for", "bash", "git push", Ruleset{allowAll, userAsk, pDenyAll, pGit},
			Decision{Ask, &userAsk, "git push"}},
		{"a narrowing allow alone asks, as no rule matching does", "bash", "ls", Ruleset{pAllow},
			Decision{Ask, nil, "ls"}},
		{"a narrowing ask alone names itself", "bash", "ls", Ruleset{pAsk},
			Decision{Ask, &pAsk, "ls"}},
		{"a narrowing rule anywhere in the list narrows: a later ordinary rule does not beat it", "bash", "curl x", Ruleset{pDeny, allowAll},
			Decision{Deny, &pDeny, "curl x"}},
		{"a malformed narrowing effect denies", "bash", "ls", Ruleset{allowAll, pBad},
			Decision{Deny, &pBad, "ls"}},
		{"equally strict: the ordinary rule is named", "bash", "ls", Ruleset{allowAll, userAsk, pAsk},
			Decision{Ask, &userAsk, "ls"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Evaluate(tt.action, tt.resource, tt.rules)); diff != "" {
			t.Errorf("%s: Evaluate mismatch (-want +got):\n%s", tt.why, diff)
		}
		got := EvaluateInput(descriptor.Request{Action: tt.action, Resources: []string{tt.resource}}, tt.rules, nil)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: EvaluateInput mismatch (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestNarrowingWhollyDenied(t *testing.T) {
	allowAll := Rule{Action: "*", Resource: "*", Effect: Allow, Source: SourceDefault}
	tests := []struct {
		why   string
		rules Ruleset
		want  bool
	}{
		{"a narrowing deny of every edit hides edit", append(Ruleset{allowAll}, narrowing(Rule{Action: "edit", Resource: "*", Effect: Deny})...), true},
		{"a later ordinary allow does not beat it", append(narrowing(Rule{Action: "edit", Resource: "*", Effect: Deny}), allowAll), true},
		{"a narrowing exception after it does not hide edit", append(Ruleset{allowAll}, narrowing(
			Rule{Action: "edit", Resource: "*", Effect: Deny}, Rule{Action: "edit", Resource: "src/*", Effect: Allow})...), false},
		{"a narrowing allow does not undo the user's wholly deny", Ruleset{allowAll, {Action: "edit", Resource: "*", Effect: Deny, Source: SourceUser},
			narrowing(Rule{Action: "*", Resource: "*", Effect: Allow})[0]}, true},
	}
	for _, tt := range tests {
		if got := WhollyDenied("edit", tt.rules); got != tt.want {
			t.Errorf("%s: WhollyDenied = %v, want %v", tt.why, got, tt.want)
		}
	}
}

// interleave puts the narrowing rules n among the ordinary rules o, in
// their own order, at drawn places.
func interleave(t *rapid.T, o, n Ruleset) Ruleset {
	out := make(Ruleset, 0, len(o)+len(n))
	i, j := 0, 0
	for i < len(o) || j < len(n) {
		if j < len(n) && (i == len(o) || rapid.Bool().Draw(t, "narrowing next")) {
			out = append(out, n[j])
			j++
		} else {
			out = append(out, o[i])
			i++
		}
	}
	return out
}

// genNarrowingRequest draws a request on paths under formsRoot, in both
// forms, or on plain resources.
func genNarrowingRequest() *rapid.Generator[descriptor.Request] {
	return rapid.Custom(func(t *rapid.T) descriptor.Request {
		req := descriptor.Request{Action: genAction().Draw(t, "action")}
		if rapid.Bool().Draw(t, "paths") {
			req.Root = formsRoot
			req.Resources = rapid.SliceOfN(genRelPath(), 0, 3).Draw(t, "paths")
		} else {
			req.Resources = rapid.SliceOfN(genResource(), 0, 3).Draw(t, "resources")
		}
		return req
	})
}

// Adding narrowing rules anywhere never loosens a decision (allow < ask <
// deny): not of a request with saved approvals, not in either path form,
// not of the catalogue; and of one resource, the decision is the stricter
// of the ordinary rules' and the narrowing rules' own last match (an allow
// of theirs counting as no match).
func TestNarrowingNeverLoosens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := genFormsRuleset().Draw(t, "ordinary")
		if rapid.Bool().Draw(t, "protected") {
			o = append(o, Rule{Action: "edit", Resource: "a/**", Effect: Ask, Source: SourceProtected})
		}
		n := narrowing(genFormsRuleset().Draw(t, "narrowing")...)
		mixed := interleave(t, o, n)
		var saved Ruleset
		for _, r := range genFormsRuleset().Draw(t, "saved") {
			saved = append(saved, Rule{Action: r.Action, Resource: r.Resource, Effect: Allow, Source: SourceSaved})
		}
		req := genNarrowingRequest().Draw(t, "request")
		without, with := EvaluateInput(req, o, saved), EvaluateInput(req, mixed, saved)
		if with.Effect.strictness() < without.Effect.strictness() {
			t.Fatalf("narrowing rules loosened %+v: %+v without them, %+v with", req, without, with)
		}
		if WhollyDenied(req.Action, o) && !WhollyDenied(req.Action, mixed) {
			t.Fatalf("narrowing rules showed %s, which the other rules wholly deny", req.Action)
		}
		res := genFormsPattern().Draw(t, "resource")
		want := Evaluate(req.Action, res, o).Effect
		for i := len(n) - 1; i >= 0; i-- {
			if Match(n[i].Action, req.Action) && Match(n[i].Resource, res) {
				if n[i].Effect.strictness() > want.strictness() {
					want = n[i].Effect
				}
				break
			}
		}
		if got := Evaluate(req.Action, res, mixed).Effect; got != want {
			t.Fatalf("Evaluate(%s, %q) = %s, want the stricter of the two lists' decisions, %s", req.Action, res, got, want)
		}
	})
}
