package gate

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
)

func TestPathResourcesInBothForms(t *testing.T) {
	rule := func(resource string, e Effect) Rule {
		return Rule{Action: "edit", Resource: resource, Effect: e, Source: SourceUser}
	}
	const root = "/home/me/proj"
	tests := []struct {
		why        string
		configured Ruleset
		saved      Ruleset
		resource   string
		root       string
		want       Effect
		wantRule   string // the resource pattern of the deciding rule; "" for none
	}{
		{"an absolute deny, then a relative allow-all: deny (the fail-open)",
			Ruleset{rule(root+"/secrets/**", Deny), rule("*", Allow)}, nil, "secrets/key.md", root, Deny, root + "/secrets/**"},
		{"a relative allow-all, then an absolute deny: deny",
			Ruleset{rule("*", Allow), rule(root+"/secrets/**", Deny)}, nil, "secrets/key.md", root, Deny, root + "/secrets/**"},
		{"the absolute deny does not reach other files",
			Ruleset{rule(root+"/secrets/**", Deny), rule("*", Allow)}, nil, "src/a.go", root, Allow, "*"},
		{"without Root the request names no paths: today's single form",
			Ruleset{rule(root+"/secrets/**", Deny), rule("*", Allow)}, nil, "secrets/key.md", "", Allow, "*"},
		{"a relative catch-all is not asked about the absolute form",
			Ruleset{rule("*", Ask), rule("src/*", Allow)}, nil, "src/a.go", root, Allow, "src/*"},
		{"an absolute allow alone allows",
			Ruleset{rule(root+"/docs/**", Allow)}, nil, "docs/a.md", root, Allow, root + "/docs/**"},
		{"a catch-all ask, then an absolute allow: the relative form abstains",
			Ruleset{rule("*", Ask), rule(root+"/src/*", Allow)}, nil, "src/a.go", root, Allow, root + "/src/*"},
		{"a pattern about any path (*.go) abstains as well",
			Ruleset{rule("*.go", Ask), rule(root+"/src/*", Allow)}, nil, "src/a.go", root, Allow, root + "/src/*"},
		{"an absolute allow, then a catch-all ask: ask (last match)",
			Ruleset{rule(root+"/src/*", Allow), rule("*", Ask)}, nil, "src/a.go", root, Ask, "*"},
		{"a catch-all deny before an absolute allow still denies",
			Ruleset{rule("*", Deny), rule(root+"/src/*", Allow)}, nil, "src/a.go", root, Deny, "*"},
		{"a relative rule about this form does not abstain",
			Ruleset{rule("src/*", Ask), rule(root+"/src/*", Allow)}, nil, "src/a.go", root, Ask, "src/*"},
		{"an absolute ask after an allow-all asks",
			Ruleset{rule("*", Allow), rule(root+"/docs/**", Ask)}, nil, "docs/a.md", root, Ask, root + "/docs/**"},
		{"the stricter form holds: an absolute ask before a relative allow",
			Ruleset{rule(root+"/**", Ask), rule("src/*", Allow)}, nil, "src/a.go", root, Ask, root + "/**"},
		{"the stricter form holds: a relative deny before an absolute allow",
			Ruleset{rule("secrets/**", Deny), rule(root+"/**", Allow)}, nil, "secrets/k", root, Deny, "secrets/**"},
		{"within the absolute form the last match wins",
			Ruleset{rule(root+"/**", Deny), rule(root+"/src/**", Allow)}, nil, "src/a.go", root, Allow, root + "/src/**"},
		{"no rule judges either form: ask",
			Ruleset{rule("/elsewhere/**", Deny)}, nil, "src/a.go", root, Ask, ""},
		{"the location itself is the root",
			Ruleset{rule("*", Allow), rule(root, Deny)}, nil, ".", root, Deny, root},
		{"a path outside the location is one form, judged by every rule",
			Ruleset{rule("*", Allow), rule("/etc/**", Ask)}, nil, "/etc/hosts", root, Ask, "/etc/**"},
		{"a relative rule still judges a path outside the location",
			Ruleset{rule("/etc/**", Ask), rule("*", Allow)}, nil, "/etc/hosts", root, Allow, "*"},
		{"an absolute pattern with backslashes",
			Ruleset{rule("*", Allow), rule(`\home\me\proj\secrets\**`, Deny)}, nil, "secrets/key.md", root, Deny, `\home\me\proj\secrets\**`},
		{"an absolute **/ matches zero directories",
			Ruleset{rule("*", Allow), rule(root+"/**/.env*", Deny)}, nil, ".env", root, Deny, root + "/**/.env*"},
		{"a root with a trailing slash",
			Ruleset{rule("*", Allow), rule(root+"/secrets/**", Deny)}, nil, "secrets/key.md", root + "/", Deny, root + "/secrets/**"},
		{"a saved approval allows past an absolute ask",
			Ruleset{rule("*", Ask), rule(root+"/secrets/**", Ask)}, Ruleset{savedRule("edit", "*")}, "secrets/k", root, Allow, "*"},
		{"a saved approval never beats an absolute deny",
			Ruleset{rule(root+"/secrets/**", Deny), rule("*", Ask)}, Ruleset{savedRule("edit", "*")}, "secrets/k", root, Deny, root + "/secrets/**"},
		{"an absolute saved approval matches the absolute form",
			Ruleset{rule("*", Ask)}, Ruleset{savedRule("edit", root+"/docs/*")}, "docs/a.md", root, Allow, root + "/docs/*"},
		{"an absolute saved approval does not match other files",
			Ruleset{rule("*", Ask)}, Ruleset{savedRule("edit", root+"/docs/*")}, "src/a.go", root, Ask, "*"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			req := descriptor.Request{Action: "edit", Resources: []string{tt.resource}, Root: tt.root}
			d := EvaluateInput(req, tt.configured, tt.saved)
			type got struct {
				Effect         Effect
				Rule, Resource string
			}
			g := got{Effect: d.Effect, Resource: d.Resource}
			if d.Rule != nil {
				g.Rule = d.Rule.Resource
			}
			if diff := cmp.Diff(got{tt.want, tt.wantRule, tt.resource}, g); diff != "" {
				t.Errorf("EvaluateInput mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A call's requests keep their Root through a confirmation: the ticket's
// requests are matched in both forms when it is answered, so a deny added
// to the configuration with the absolute path blocks the waiting call.
func TestPathFormsSurviveAConfirmation(t *testing.T) {
	const root = "/home/me/proj"
	pinned := Ruleset{{Action: "edit", Resource: "*", Effect: Ask, Source: SourceUser}}
	reqs := []descriptor.Request{{Action: "edit", Resources: []string{"src/a.go", "secrets/k"}, Save: []string{"*"}, Root: root}}
	v := Decide(Configured, reqs, pinned, nil)
	if v.Kind != KindConfirm || len(v.Asked) != 1 || v.Asked[0].Root != root {
		t.Fatalf("Decide = %+v, want a confirmation whose request keeps Root %q", v, root)
	}
	current := append(slices.Clone(pinned), Rule{Action: "edit", Resource: root + "/secrets/**", Effect: Deny, Source: SourceUser})
	r := Resume(v.Asked, pinned, current, Ruleset{savedRule("edit", "*")})
	if r.Kind != KindBlock || r.Rule == nil || r.Rule.Resource != root+"/secrets/**" {
		t.Fatalf("Resume = %+v, want blocked by the absolute deny", r)
	}
	if r := Resume(v.Asked, pinned, pinned, Ruleset{savedRule("edit", "*")}); r.Kind != KindAllow {
		t.Fatalf("Resume without the deny = %+v, want allowed by the saved approval", r)
	}
}
