package gate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
)

func TestEvaluate(t *testing.T) {
	build, bash := buildDefaults(), projectBash()
	tests := []struct {
		why              string
		action, resource string
		rulesets         []Ruleset
		want             Decision
	}{
		{"build agent: reading a source file is allowed", "read", "main.go", []Ruleset{build},
			Decision{Allow, &build[4], "main.go"}},
		{"build agent: reading .env asks", "read", ".env", []Ruleset{build},
			Decision{Ask, &build[5], ".env"}},
		{"build agent: reading a nested .env asks", "read", "config/.env", []Ruleset{build},
			Decision{Ask, &build[5], "config/.env"}},
		{"build agent: reading .env.local asks", "read", ".env.local", []Ruleset{build},
			Decision{Ask, &build[6], ".env.local"}},
		{"build agent: reading .env.example is allowed by the last rule", "read", ".env.example", []Ruleset{build},
			Decision{Allow, &build[7], ".env.example"}},
		{"build agent: a backup of .env.example asks again", "read", "app.env.example.bak", []Ruleset{build},
			Decision{Ask, &build[6], "app.env.example.bak"}},
		{"build agent: an unnamed action is allowed by the catch-all", "webfetch", "https://go.dev", []Ruleset{build},
			Decision{Allow, &build[0], "https://go.dev"}},
		{"build agent: leaving the location asks", "external_directory", "/etc/*", []Ruleset{build},
			Decision{Ask, &build[1], "/etc/*"}},
		{"build agent: the temp directory is allowed", "external_directory", "/tmp/build/*", []Ruleset{build},
			Decision{Allow, &build[3], "/tmp/build/*"}},
		{"build agent: a Windows path reads backslashes as slashes", "external_directory", `\tmp\x`, []Ruleset{build},
			Decision{Allow, &build[3], `\tmp\x`}},
		{"a later ruleset overrides an earlier one", "bash", "ls -la", []Ruleset{build, bash},
			Decision{Ask, &bash[0], "ls -la"}},
		{"git status without arguments is allowed by 'git status *'", "bash", "git status", []Ruleset{build, bash},
			Decision{Allow, &bash[1], "git status"}},
		{"git status with arguments is allowed", "bash", "git status --short", []Ruleset{build, bash},
			Decision{Allow, &bash[1], "git status --short"}},
		{"a longer command word is not 'git status *'", "bash", "git statusx", []Ruleset{build, bash},
			Decision{Ask, &bash[0], "git statusx"}},
		{"rm is denied", "bash", "rm -rf /", []Ruleset{build, bash},
			Decision{Deny, &bash[3], "rm -rf /"}},
		{"the last match decides even across rulesets", "bash", "rm -rf /", []Ruleset{bash, build},
			Decision{Allow, &build[0], "rm -rf /"}},
		{"no rulesets: ask", "read", "main.go", nil,
			Decision{Effect: Ask, Resource: "main.go"}},
		{"empty rulesets: ask", "read", "main.go", []Ruleset{{}, nil},
			Decision{Effect: Ask, Resource: "main.go"}},
		{"no rule matches: ask", "bash", "ls", []Ruleset{{{Action: "read", Resource: "*", Effect: Allow}}},
			Decision{Effect: Ask, Resource: "ls"}},
		{"the action must match too", "edit", "main.go", []Ruleset{{{Action: "read", Resource: "*", Effect: Deny}}},
			Decision{Effect: Ask, Resource: "main.go"}},
		{"a rule with an invalid effect decides deny", "read", "x", []Ruleset{{{Action: "*", Resource: "*", Effect: "maybe"}}},
			Decision{Deny, &Rule{Action: "*", Resource: "*", Effect: "maybe"}, "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got := Evaluate(tt.action, tt.resource, tt.rulesets...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%q, %q) mismatch (-want +got):\n%s", tt.action, tt.resource, diff)
			}
		})
	}
}

func TestEvaluatePointsIntoTheRuleset(t *testing.T) {
	rs := buildDefaults()
	got := Evaluate("read", ".env", rs)
	if got.Rule != &rs[5] {
		t.Errorf("Evaluate(read, .env).Rule = %p, want &rs[5] = %p", got.Rule, &rs[5])
	}
}

func TestEvaluateInput(t *testing.T) {
	conf := configured()
	at := func(action, resource string) *Rule { return Evaluate(action, resource, conf).Rule }
	bashAll, lsSaved := savedRule("bash", "*"), savedRule("bash", "ls *")
	tests := []struct {
		why   string
		req   descriptor.Request
		saved Ruleset
		want  Decision
	}{
		{"no resources: allow",
			descriptor.Request{Action: "bash"}, nil,
			Decision{Effect: Allow}},
		{"an empty resource list: allow",
			descriptor.Request{Action: "bash", Resources: []string{}}, nil,
			Decision{Effect: Allow}},
		{"every resource allowed: allow, decided by the first",
			descriptor.Request{Action: "bash", Resources: []string{"git status", "go test ./..."}}, nil,
			Decision{Allow, at("bash", "git status"), "git status"}},
		{"one resource asks: ask, decided by it",
			descriptor.Request{Action: "bash", Resources: []string{"git status", "ls", "cat x"}}, nil,
			Decision{Ask, at("bash", "ls"), "ls"}},
		{"one resource denied: deny, whatever the order",
			descriptor.Request{Action: "bash", Resources: []string{"ls", "rm -rf ~", "git status"}}, nil,
			Decision{Deny, at("bash", "rm -rf ~"), "rm -rf ~"}},
		{"the first denied resource decides",
			descriptor.Request{Action: "bash", Resources: []string{"rm a", "rm b"}}, nil,
			Decision{Deny, at("bash", "rm a"), "rm a"}},
		{"a saved approval turns ask into allow",
			descriptor.Request{Action: "bash", Resources: []string{"ls -la"}}, Ruleset{lsSaved},
			Decision{Allow, &lsSaved, "ls -la"}},
		{"a saved approval for one command leaves the others asking",
			descriptor.Request{Action: "bash", Resources: []string{"ls -la", "cat x"}}, Ruleset{lsSaved},
			Decision{Ask, at("bash", "cat x"), "cat x"}},
		{"a saved approval never overrides a configured deny",
			descriptor.Request{Action: "bash", Resources: []string{"ls", "rm -rf ~"}}, Ruleset{bashAll},
			Decision{Deny, at("bash", "rm -rf ~"), "rm -rf ~"}},
		{"a saved approval of one action leaves other actions alone",
			descriptor.Request{Action: "edit", Resources: []string{"main.go"}}, Ruleset{bashAll},
			Decision{Ask, at("edit", "main.go"), "main.go"}},
		{"the build agent's .env ask is lifted by a saved approval",
			descriptor.Request{Action: "read", Resources: []string{".env"}}, Ruleset{savedRule("read", "*")},
			Decision{Allow, &Rule{Action: "read", Resource: "*", Effect: Allow, Source: SourceSaved}, ".env"}},
		{"a command no allow rule names asks",
			descriptor.Request{Action: "bash", Resources: []string{"ls"}}, nil,
			Decision{Ask, at("bash", "ls"), "ls"}},
		{"a saved deny (beyond the spec) denies, after configured denies",
			descriptor.Request{Action: "bash", Resources: []string{"ls", "rm x"}},
			Ruleset{{Action: "bash", Resource: "ls", Effect: Deny, Source: SourceSaved}},
			Decision{Deny, at("bash", "rm x"), "rm x"}},
		{"a saved deny (beyond the spec) beats ask",
			descriptor.Request{Action: "bash", Resources: []string{"cat x", "ls"}},
			Ruleset{{Action: "bash", Resource: "ls", Effect: Deny, Source: SourceSaved}},
			Decision{Deny, &Rule{Action: "bash", Resource: "ls", Effect: Deny, Source: SourceSaved}, "ls"}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got := EvaluateInput(tt.req, conf, tt.saved)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EvaluateInput(%+v) mismatch (-want +got):\n%s", tt.req, diff)
			}
		})
	}
}

func TestEvaluateInputWithoutRules(t *testing.T) {
	got := EvaluateInput(descriptor.Request{Action: "bash", Resources: []string{"ls"}}, nil, nil)
	want := Decision{Effect: Ask, Resource: "ls"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvaluateInput without rules mismatch (-want +got):\n%s", diff)
	}
}

func TestEvaluateInputDoesNotAllocate(t *testing.T) {
	conf, saved := benchRules(), Ruleset{savedRule("bash", "ls *")}
	req := descriptor.Request{Action: "bash", Resources: []string{"git status", "ls -la", "rm x"}}
	got := testing.AllocsPerRun(100, func() { EvaluateInput(req, conf, saved) })
	if diff := cmp.Diff(0.0, got); diff != "" {
		t.Errorf("allocations per EvaluateInput (-want +got):\n%s", diff)
	}
}
