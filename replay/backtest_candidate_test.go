package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

func parse(t *testing.T, text string) *config.File {
	t.Helper()
	f, err := config.Parse("candidate.yaml", []byte(text), gate.SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// pinnedBy is the ruleset the engine pins for agent under layers, with the
// run's overrides after (config.Resolve, then commands' StartRun).
func pinnedBy(t *testing.T, agent string, layers []*config.File, overrides ...gate.Rule) events.RunStarted {
	t.Helper()
	e, _ := config.Resolve(agent, layers)
	rules := append(e.Rules, overrides...)
	return events.RunStarted{Agent: agent, Project: "p", Rules: eventRules(rules), Narrowing: "configured"}
}

const projectText = "agents:\n  build:\n    permission:\n      bash: { \"*\": ask, \"git *\": allow }\n"

// The candidate that says what the run's user and project files said gives
// back the pinned ruleset rule for rule, overrides and protections kept.
func TestCandidateOfTheRunsOwnFileIsPinned(t *testing.T) {
	builtin := config.Builtin("/data/tool-output")
	// parse reads both as project files; trusted, each is a layer like the
	// user's, as a candidate is (an untrusted project's rules narrow only).
	user := parse(t, "agents:\n  build:\n    permission:\n      read: { \"secret*\": deny }\n").TrustProject()
	project := parse(t, projectText).TrustProject()
	override := gate.Rule{Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceRun}
	started := pinnedBy(t, "build", []*config.File{builtin, user, project}, override)
	// one file for both layers, the user's rules first
	both := parse(t, "agents:\n  build:\n    permission:\n      - { action: read, resource: \"secret*\", effect: deny }\n"+
		"      - { action: bash, resource: \"*\", effect: ask }\n      - { action: bash, resource: \"git *\", effect: allow }\n")
	got := Candidate{File: both}.Rules(started)
	want := vocab.Rules(started.Rules)
	for i := range got { // the candidate's rules are labelled as the project's
		if got[i].Source == gate.SourceProject && want[i].Source == gate.SourceUser {
			got[i].Source = gate.SourceUser
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("candidate of the run's own files (-pinned +candidate):\n%s", d)
	}
	if d := cmp.Diff(vocab.Rules(pinnedBy(t, "build", []*config.File{builtin, project}).Rules), Candidate{File: project}.Rules(pinnedBy(t, "build", []*config.File{builtin, project}))); d != "" {
		t.Errorf("project file only (-pinned +candidate):\n%s", d)
	}
}

// What a candidate replaces and what it keeps.
func TestCandidateReplacesTheLayers(t *testing.T) {
	builtin := config.Builtin("")
	override := gate.Rule{Action: "bash", Resource: "curl *", Effect: gate.Ask, Source: gate.SourceRun}
	started := pinnedBy(t, "build", []*config.File{builtin, parse(t, projectText)}, override)
	cand := parse(t, "agents:\n  build:\n    permission:\n      bash: { \"rm *\": deny }\nprotected_paths: { add: [\"secrets/**\"] }\n")
	got := Candidate{File: cand}.Rules(started)
	var want gate.Ruleset
	want = append(want, builtin.Agents["build"]...)
	want = append(want, gate.Rule{Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceProject})
	for _, r := range vocab.Rules(started.Rules) {
		if r.Source == gate.SourceProtected {
			want = append(want, r)
		}
	}
	want = append(want, gate.Rule{Action: config.ProtectedAction, Resource: "secrets/**", Effect: gate.Ask, Source: gate.SourceProtected}, override)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	// An agent neither the built-in layer nor the candidate defines: deny-all,
	// then the run's overrides.
	got = Candidate{File: cand, Agent: "nobody", Builtin: builtin}.Rules(started)
	if d := cmp.Diff(append(gate.DenyAllRules(gate.SourceDefault), override), got); d != "" {
		t.Errorf("undefined agent (-want +got):\n%s", d)
	}
	// Another agent: its built-in defaults, not the run's agent's.
	got = Candidate{File: cand, Agent: "explore", Builtin: builtin}.Rules(started)
	if d := cmp.Diff(builtin.Agents["explore"], got[:len(builtin.Agents["explore"])]); d != "" {
		t.Errorf("explore (-want +got):\n%s", d)
	}
}

// A verdict recorded without the requests the call raised is not
// re-decidable, never guessed; a call that needs no permission is.
func TestBacktestWithoutRequestsIsNotRedecidable(t *testing.T) {
	started := events.RunStarted{Agent: "build", Project: "p", Narrowing: "configured",
		Rules: []events.Rule{{Action: "*", Resource: "*", Effect: "allow", Source: "default"}}}
	commits := []*events.Commit{
		{ID: "1", Run: "R", Kind: events.KindStart, Events: []events.Event{started}},
		{ID: "2", Run: "R", Step: 1, Kind: events.KindStep, Events: []events.Event{
			events.PermissionDecided{CallID: "old", Verdict: "allow", Reason: `allowed by rule * "*" (built-in default)`},
			events.PermissionDecided{CallID: "none", Verdict: "allow", Reason: "no permission required"},
			events.PermissionDecided{CallID: "bad", Verdict: "reject", Reason: "unknown tool"},
		}},
		{ID: "3", Run: "S", Step: 1, Kind: events.KindStep, Events: []events.Event{
			events.PermissionDecided{CallID: "orphan", Verdict: "allow", Requests: []events.Request{{Action: "bash", Resources: []string{"ls"}}}},
		}},
	}
	deny := func(events.RunStarted) gate.Ruleset { return gate.DenyAllRules(gate.SourceProject) }
	changes, sum := backtest(commits, deny)
	want := Summary{Redecided: 1, Runs: 1, Changed: map[string]int{}, Refused: 1,
		NotRedecidable: map[string]int{NoRequests: 1, NoStart: 1}}
	if len(changes) != 0 {
		t.Errorf("changes %+v", changes)
	}
	if d := cmp.Diff(want, sum); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}
