package gate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
)

func TestDecide(t *testing.T) {
	conf := configured()
	rule := func(action, resource string) *Rule { return Evaluate(action, resource, conf).Rule }
	ext := descriptor.Request{Action: "external_directory", Resources: []string{"/etc/*"}, Save: []string{"/etc/*"}}
	readMain := descriptor.Request{Action: "read", Resources: []string{"main.go"}, Save: []string{"*"}}
	readEnv := descriptor.Request{Action: "read", Resources: []string{".env"}, Save: []string{"*"}}
	bashLs := descriptor.Request{Action: "bash", Resources: []string{"ls", "git status"}, Save: []string{"ls", "git status"}}
	bashRm := descriptor.Request{Action: "bash", Resources: []string{"ls", "rm -rf ~"}, Save: []string{"ls", "rm -rf ~"}}
	lsSaved := savedRule("bash", "ls")
	tests := []struct {
		why        string
		narrowing  Narrowing
		reqs       []descriptor.Request
		configured Ruleset
		saved      Ruleset
		want       Verdict
	}{
		{"deny-all blocks every call", DenyAll, []descriptor.Request{readMain}, conf, nil,
			Verdict{Kind: KindBlock, Reason: "tools are disabled for this run"}},
		{"deny-all blocks even a call that asks for nothing", DenyAll, nil, conf, nil,
			Verdict{Kind: KindBlock, Reason: "tools are disabled for this run"}},
		{"an unknown narrowing fails closed", Narrowing(9), []descriptor.Request{readMain}, conf, nil,
			Verdict{Kind: KindBlock, Reason: "tools are disabled for this run"}},
		{"a call that raises no request is allowed", Configured, nil, conf, nil,
			Verdict{Kind: KindAllow, Reason: "no permission required"}},
		{"an allowed request: allow, naming the rule", Configured, []descriptor.Request{readMain}, conf, nil,
			Verdict{Kind: KindAllow, Reason: `allowed by rule read "*" (built-in default)`, Rule: rule("read", "main.go")}},
		{"a denied simple command blocks the call", Configured, []descriptor.Request{bashRm}, conf, nil,
			Verdict{Kind: KindBlock, Reason: `denied by rule bash "rm *" (project config)`, Rule: rule("bash", "rm -rf ~")}},
		{"one asking request: confirm, listing it", Configured, []descriptor.Request{ext, readMain}, conf, nil,
			Verdict{Kind: KindConfirm, Reason: `confirmation required by rule external_directory "*" (built-in default)`,
				Rule: rule("external_directory", "/etc/*"), Asked: []descriptor.Request{ext}}},
		{"every asking request is listed, in order", Configured, []descriptor.Request{ext, readMain, readEnv}, conf, nil,
			Verdict{Kind: KindConfirm, Reason: `confirmation required by rule external_directory "*" (built-in default)`,
				Rule: rule("external_directory", "/etc/*"), Asked: []descriptor.Request{ext, readEnv}}},
		{"deny beats ask", Configured, []descriptor.Request{ext, bashRm}, conf, nil,
			Verdict{Kind: KindBlock, Reason: `denied by rule bash "rm *" (project config)`, Rule: rule("bash", "rm -rf ~")}},
		{"a saved approval allows what asked", Configured, []descriptor.Request{bashLs}, conf, Ruleset{lsSaved},
			Verdict{Kind: KindAllow, Reason: `allowed by rule bash "ls" (saved approval)`, Rule: &lsSaved}},
		{"a saved approval never beats a configured deny", Configured, []descriptor.Request{bashRm}, conf, Ruleset{savedRule("bash", "*")},
			Verdict{Kind: KindBlock, Reason: `denied by rule bash "rm *" (project config)`, Rule: rule("bash", "rm -rf ~")}},
		{"an agent whose rules cannot be resolved is denied everything", Configured, []descriptor.Request{readMain},
			DenyAllRules(SourceDefault), Ruleset{savedRule("read", "*")},
			Verdict{Kind: KindBlock, Reason: `denied by rule * "*" (built-in default)`,
				Rule: &Rule{Action: "*", Resource: "*", Effect: Deny, Source: SourceDefault}}},
		{"no rule matches: confirm, saying so", Configured, []descriptor.Request{bashLs}, nil, nil,
			Verdict{Kind: KindConfirm, Reason: `confirmation required: no rule matches bash "ls"`, Asked: []descriptor.Request{bashLs}}},
		{"allow reports the first request, even one without resources", Configured,
			[]descriptor.Request{{Action: "question"}, readMain}, conf, nil,
			Verdict{Kind: KindAllow, Reason: "allowed: no resource requested for question"}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got := Decide(tt.narrowing, tt.reqs, tt.configured, tt.saved)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerdictJSON(t *testing.T) {
	tests := []struct {
		why     string
		verdict Verdict
		want    string
	}{
		{"block names its rule",
			Verdict{Kind: KindBlock, Reason: `denied by rule bash "rm *" (project config)`,
				Rule: &Rule{Action: "bash", Resource: "rm *", Effect: Deny, Source: SourceProject}},
			`{"kind":"block","reason":"denied by rule bash \"rm *\" (project config)",` +
				`"rule":{"action":"bash","resource":"rm *","effect":"deny","source":"project"}}`},
		{"confirm lists the requests that asked",
			Verdict{Kind: KindConfirm, Reason: "r", Asked: []descriptor.Request{{Action: "edit", Resources: []string{"a.go"}, Save: []string{"*"}}}},
			`{"kind":"confirm","reason":"r","asked":[{"action":"edit","resources":["a.go"],"save":["*"]}]}`},
		{"allow without a rule leaves it out",
			Verdict{Kind: KindAllow, Reason: "no permission required"},
			`{"kind":"allow","reason":"no permission required"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.verdict)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", tt.why, err)
		}
		if diff := cmp.Diff(tt.want, string(b)); diff != "" {
			t.Errorf("%s: JSON mismatch (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestDecideRequestThatAlwaysAsks(t *testing.T) {
	allowAll := Ruleset{{Action: "*", Resource: "*", Effect: Allow, Source: SourceDefault}}
	req := descriptor.Request{Action: "bash", Resources: []string{"if then fi ((("}, Ask: true}
	if v := Decide(Configured, []descriptor.Request{req}, allowAll, nil); v.Kind != KindConfirm {
		t.Errorf("an always-ask request under allow-all: %s, want confirm", v.Kind)
	}
	deny := append(allowAll, Rule{Action: "bash", Resource: "*", Effect: Deny, Source: SourceProject})
	if v := Decide(Configured, []descriptor.Request{req}, deny, nil); v.Kind != KindBlock {
		t.Errorf("an always-ask request under a deny: %s, want block", v.Kind)
	}
}
