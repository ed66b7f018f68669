package gate_test

import (
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/gate"
)

func ExampleMatch() {
	fmt.Println(gate.Match("git push *", "git push"))
	fmt.Println(gate.Match("git push *", "git push origin main"))
	fmt.Println(gate.Match("git push *", "git pushx"))
	fmt.Println(gate.Match("src/*.go", `src\gate\match.go`))
	// Output:
	// true
	// true
	// false
	// true
}

func ExampleEvaluate() {
	// The read rules of the built-in build agent: the last matching rule decides.
	build := gate.Ruleset{
		{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
		{Action: "read", Resource: "*.env", Effect: gate.Ask, Source: gate.SourceDefault},
		{Action: "read", Resource: "*.env.*", Effect: gate.Ask, Source: gate.SourceDefault},
		{Action: "read", Resource: "*.env.example", Effect: gate.Allow, Source: gate.SourceDefault},
	}
	for _, file := range []string{"main.go", ".env", "config/.env.local", ".env.example"} {
		d := gate.Evaluate("read", file, build)
		fmt.Printf("%-18s %-5s by %s\n", file, d.Effect, d.Rule)
	}
	fmt.Println(gate.Evaluate("bash", "ls", nil).Effect, "when no rule matches")
	// Output:
	// main.go            allow by * "*"
	// .env               ask   by read "*.env"
	// config/.env.local  ask   by read "*.env.*"
	// .env.example       allow by read "*.env.example"
	// ask when no rule matches
}

func ExampleDecide() {
	configured := gate.Ruleset{
		{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
		{Action: "bash", Resource: "*", Effect: gate.Ask, Source: gate.SourceProject},
		{Action: "bash", Resource: "go test *", Effect: gate.Allow, Source: gate.SourceProject},
		{Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceProject},
	}
	// `go test ./... && ls` raises one resource per simple command.
	call := []descriptor.Request{{Action: "bash", Resources: []string{"go test ./...", "ls"}, Save: []string{"go test ./...", "ls"}}}

	v := gate.Decide(gate.Configured, call, configured, nil)
	fmt.Println(v.Kind, "-", v.Reason, "- asked:", v.Asked[0].Resources)

	// The human replied "always" and ls was saved for the project.
	saved := gate.Ruleset{{Action: "bash", Resource: "ls", Effect: gate.Allow, Source: gate.SourceSaved}}
	v = gate.Decide(gate.Configured, call, configured, saved)
	fmt.Println(v.Kind, "-", v.Reason)

	// A saved approval never overrides a configured deny.
	rm := []descriptor.Request{{Action: "bash", Resources: []string{"rm -rf build"}}}
	saved = append(saved, gate.Rule{Action: "bash", Resource: "*", Effect: gate.Allow, Source: gate.SourceSaved})
	v = gate.Decide(gate.Configured, rm, configured, saved)
	fmt.Println(v.Kind, "-", v.Reason)

	// Under DenyAll nothing runs.
	v = gate.Decide(gate.Narrow(gate.Configured, gate.DenyAll), call, configured, saved)
	fmt.Println(v.Kind, "-", v.Reason)
	// Output:
	// confirm - confirmation required by rule bash "*" (project config) - asked: [ls]
	// allow - allowed by rule bash "go test *" (project config)
	// block - denied by rule bash "rm *" (project config)
	// block - tools are disabled for this run
}

// A protection asks before a protected path is written, whatever the rules
// and saved approvals say, and the request that asks saves nothing.
func ExampleDecide_protectedPath() {
	configured := gate.Ruleset{
		{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
		{Action: "edit", Resource: ".git/**", Effect: gate.Ask, Source: gate.SourceProtected},
	}
	saved := gate.Ruleset{{Action: "edit", Resource: "*", Effect: gate.Allow, Source: gate.SourceSaved}}
	patch := []descriptor.Request{{Action: "edit", Resources: []string{"main.go", ".Git/hooks/pre-commit"}, Save: []string{"*"}}}
	v := gate.Decide(gate.Configured, patch, configured, saved)
	fmt.Println(v.Kind, "-", v.Reason)
	fmt.Printf("%+v\n", v.Asked)
	fmt.Println(gate.MatchPath(".git/**", "vendor/x/.git/config"), gate.MatchPath("/Makefile", "sub/Makefile"))
	// Output:
	// confirm - confirmation required by rule edit ".git/**" (protected path)
	// [{Action:edit Resources:[.Git/hooks/pre-commit] Save:[] Ask:true Root:}]
	// true false
}

func ExampleResume() {
	// A run pinned "bash asks"; since the call's ticket was issued the user
	// denied rm, and another ticket's "always" saved bash "*".
	pinned := gate.Ruleset{{Action: "bash", Resource: "*", Effect: gate.Ask, Source: gate.SourceProject}}
	current := gate.Ruleset{{Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceUser}}
	saved := gate.Ruleset{{Action: "bash", Resource: "*", Effect: gate.Allow, Source: gate.SourceSaved}}
	for _, cmds := range [][]string{{"ls"}, {"ls", "rm -rf build"}} {
		reqs := []descriptor.Request{{Action: "bash", Resources: cmds}}
		v := gate.Resume(reqs, pinned, current, saved)
		fmt.Printf("%-5s %-7s %s\n", cmds[len(cmds)-1], v.Kind, v.Reason)
	}
	fmt.Println(gate.Resume([]descriptor.Request{{Action: "bash", Resources: []string{"ls"}}}, pinned, current, nil).Kind, "without the grant")
	// Output:
	// ls    allow   allowed by rule bash "*" (saved approval)
	// rm -rf build block   denied by rule bash "rm *" (user config)
	// confirm without the grant
}
