package gate

import (
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

// benchRules is a realistic 50-rule configuration: the build agent's
// defaults, then user and project rules.
func benchRules() Ruleset {
	rs := buildDefaults()
	add := func(source Source, action string, effect Effect, resources ...string) {
		for _, r := range resources {
			rs = append(rs, Rule{Action: action, Resource: r, Effect: effect, Source: source})
		}
	}
	add(SourceUser, "bash", Ask, "*")
	add(SourceUser, "bash", Allow, "git status *", "git diff *", "git log *", "git show *", "ls *", "pwd",
		"cat *", "head *", "tail *", "wc *", "grep *", "rg *", "find * -name *", "go test *", "go vet *",
		"go build *", "gofmt -l *", "make test")
	add(SourceUser, "bash", Deny, "rm -rf *", "sudo *", "curl * | sh", "git push --force *")
	add(SourceUser, "webfetch", Ask, "*")
	add(SourceUser, "webfetch", Allow, "https://pkg.go.dev/*", "https://go.dev/*", "https://github.com/*")
	add(SourceProject, "edit", Ask, "*")
	add(SourceProject, "edit", Allow, "src/*", "docs/*.md", "*_test.go")
	add(SourceProject, "edit", Deny, "*.pem", "*.key", ".git/*")
	add(SourceProject, "read", Deny, "secrets/*", "*.pem")
	add(SourceProject, "external_directory", Allow, "/home/*/go/pkg/mod/*")
	add(SourceProject, "skill", Ask, "*")
	add(SourceProject, "question", Allow, "*")
	add(SourceProject, "glob", Allow, "*")
	add(SourceProject, "grep", Allow, "*")
	add(SourceRun, "websearch", Deny, "*")
	return rs
}

func BenchmarkEvaluateInput(b *testing.B) {
	conf := benchRules()
	if len(conf) != 50 {
		b.Fatalf("benchRules has %d rules, want 50", len(conf))
	}
	saved := Ruleset{savedRule("bash", "make lint"), savedRule("bash", "ls *"), savedRule("edit", "*"), savedRule("read", "*")}
	req := descriptor.Request{Action: "bash", Resources: []string{
		"go test -race ./gate/",
		"grep -rn 'TODO' --include=*.go .",
		"sed -n 1,20p gate/evaluate.go",
	}}
	b.ReportAllocs()
	for b.Loop() {
		EvaluateInput(req, conf, saved)
	}
}

// BenchmarkEvaluateInputPaths decides an edit of three paths inside the
// location, each matched in both forms, against the same rules and a
// user's absolute deny.
func BenchmarkEvaluateInputPaths(b *testing.B) {
	conf := append(benchRules(), Rule{Action: "edit", Resource: "/home/me/proj/secrets/**", Effect: Deny, Source: SourceUser})
	saved := Ruleset{savedRule("edit", "*")}
	req := descriptor.Request{Action: "edit", Resources: []string{"src/gate/evaluate.go", "docs/permissions.md", "gate/evaluate_test.go"}, Root: "/home/me/proj"}
	b.ReportAllocs()
	for b.Loop() {
		EvaluateInput(req, conf, saved)
	}
}
