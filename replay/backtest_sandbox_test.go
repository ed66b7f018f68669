package replay

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

// sandboxedRun is a run pinned to pinned whose step 1 makes the calls, each
// allowed, with a result recorded with rec (nil: no sandbox record), and a
// blocked bash call (no result); then it ends.
func sandboxedRun(pinned *events.SandboxProfile, calls map[string]*events.SandboxRecord) []*events.Commit {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allow := events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"}
	decided, results := []events.Event{}, []events.Event{}
	for _, tool := range slices.Sorted(maps.Keys(calls)) {
		id := "c-" + tool
		decided = append(decided, events.ToolCallRequested{CallID: id, Tool: tool},
			events.PermissionDecided{CallID: id, Verdict: events.VerdictAllow, Reason: "allowed", Rule: &allow,
				Requests: []events.Request{{Action: tool, Resources: []string{"x"}}}})
		results = append(results, events.ToolResultRecorded{CallID: id, Sandbox: calls[tool]})
	}
	decided = append(decided, events.ToolCallRequested{CallID: "blocked", Tool: "bash"},
		events.PermissionDecided{CallID: "blocked", Verdict: events.VerdictBlock, Reason: "denied",
			Rule: &events.Rule{Action: "bash", Resource: "rm", Effect: "deny", Source: "run"}, Requests: []events.Request{{Action: "bash", Resources: []string{"rm"}}}})
	return []*events.Commit{
		{ID: "1", Run: "R", Kind: events.KindStart, At: t0, Events: []events.Event{events.RunStarted{Agent: "build", Project: "p",
			Rules: []events.Rule{allow, {Action: "bash", Resource: "rm", Effect: "deny", Source: "run"}}, Narrowing: "configured", Sandbox: pinned}}},
		{ID: "2", Run: "R", Step: 1, Kind: events.KindDecide, At: t0, Events: decided},
		{ID: "3", Run: "R", Step: 1, Kind: events.KindStep, At: t0, Events: results},
		{ID: "4", Run: "R", Kind: events.KindEnd, At: t0, Events: []events.Event{events.RunEnded{Cause: events.CauseCompleted}}},
	}
}

// sandboxChanges backtests commits against the run's own rules and the
// candidate profile, and returns "tool direction" per change and the summary.
func sandboxChanges(commits []*events.Commit, candidate config.SandboxProfile) ([]string, Summary) {
	b := NewBacktest(func(rs events.RunStarted) gate.Ruleset { return vocab.Rules(rs.Rules) }, Filter{}).
		WithSandbox(func(events.RunStarted) config.SandboxProfile { return candidate })
	var got []string
	for i, c := range commits {
		b.Apply(uint64(i+1), c, func(ch Change) {
			if ch.Sandbox == nil {
				got = append(got, ch.Tool+" "+ch.Kind())
				return
			}
			got = append(got, fmt.Sprintf("%s %s %s→%s", ch.Tool, ch.Sandbox.Direction, ch.Sandbox.Before, ch.Sandbox.After))
		})
	}
	return got, b.Summary()
}

// The profile a call ran under is the one its result recorded, not the
// run's pinned one: a call a host's --sandbox floor contained in a run
// pinned off ran contained. A candidate that says that profile changes
// nothing for it; one that says off is looser; the file tools' records
// are the run's pinned profile, and what bears on them is their part of
// it; a blocked call, which did not run, is never compared.
func TestBacktestComparesTheRecordedProfile(t *testing.T) {
	ww := config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Network: config.NetworkOff, Denied: []string{"/k"}}
	floored := &events.SandboxRecord{Mode: "workspace-write", Network: "off", LandlockABI: 4,
		Profile: &events.SandboxProfile{Mode: "workspace-write", Network: "off", Denied: []string{"/k"}}}
	commits := sandboxedRun(nil, map[string]*events.SandboxRecord{"bash": floored, "read": nil, "echo": nil})

	got, sum := sandboxChanges(commits, ww)
	want := []string{"read tighter off→workspace-write, network off, denied /k"} // the read ran under the pinned off
	if !slices.Equal(got, want) {
		t.Errorf("candidate = the bash call's recorded profile: %q, want %q", got, want)
	}
	if diff := cmp.Diff(map[string]int{"sandbox tighter": 1}, sum.Changed); diff != "" || sum.Changes() != 1 {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	got, _ = sandboxChanges(commits, config.SandboxProfile{})
	if want := []string{"bash looser workspace-write, network off, denied /k→off"}; !slices.Equal(got, want) {
		t.Errorf("candidate off: %q, want %q", got, want)
	}

	// A result recorded before records named their profile: its mode and
	// network, over the run's pinned lists.
	old := &events.SandboxRecord{Mode: "workspace-write", Network: "off"}
	pinned := &events.SandboxProfile{Mode: "workspace-write", Network: "off", Denied: []string{"/k"}}
	got, _ = sandboxChanges(sandboxedRun(pinned, map[string]*events.SandboxRecord{"bash": old, "read": nil}), ww)
	if len(got) != 0 {
		t.Errorf("candidate = an old record's profile: %q, want no change", got)
	}

	// What bears on each tool: the network on bash alone, a writable root on
	// the tools that write, a denied path on every one.
	for _, tc := range []struct {
		cand config.SandboxProfile
		want []string
	}{
		{config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Network: config.NetworkHost, Denied: []string{"/k"}},
			[]string{"bash looser workspace-write, network off, denied /k→workspace-write, network host, denied /k"}},
		{config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Writable: []string{"/w"}, Denied: []string{"/k"}},
			[]string{"bash looser workspace-write, network off, denied /k→workspace-write, network off, writable /w, denied /k",
				"edit looser workspace-write, network off, denied /k→workspace-write, network off, writable /w, denied /k"}},
		{config.SandboxProfile{Mode: config.SandboxReadOnly, Denied: []string{"/k", "/j"}},
			[]string{"bash tighter workspace-write, network off, denied /k→read-only, network off, denied /k /j",
				"edit tighter workspace-write, network off, denied /k→read-only, network off, denied /k /j",
				"read tighter workspace-write, network off, denied /k→read-only, network off, denied /k /j"}},
		{config.SandboxProfile{Mode: config.SandboxReadOnly, Denied: []string{"/k"}},
			[]string{"bash tighter workspace-write, network off, denied /k→read-only, network off, denied /k",
				"edit tighter workspace-write, network off, denied /k→read-only, network off, denied /k"}},
	} {
		got, _ := sandboxChanges(sandboxedRun(pinned, map[string]*events.SandboxRecord{"bash": old, "read": nil, "edit": nil, "echo": nil}), tc.cand.Tighten(config.SandboxProfile{}))
		if !slices.Equal(got, tc.want) {
			t.Errorf("candidate %+v:\n got %q\nwant %q", tc.cand, got, tc.want)
		}
	}
}

// A candidate's sandbox profile is the built-in's, then the file's
// sandbox:, then its agents.NAME.sandbox:, tightened by the host's floor;
// --agent picks another agent's.
func TestCandidateSandbox(t *testing.T) {
	f := parse(t, "sandbox:\n  mode: workspace-write\n  network: proxy\n  allow: [\"a.example:443\"]\nagents:\n  build:\n    permission: {\"*\": allow}\n  review:\n    permission: {\"*\": allow}\n    sandbox:\n      mode: read-only\n")
	started := events.RunStarted{Agent: "build"}
	for _, tc := range []struct {
		c    Candidate
		want config.SandboxProfile
	}{
		{Candidate{File: f}, config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"a.example:443"}}},
		{Candidate{File: f, Agent: "review"}, config.SandboxProfile{Mode: "read-only", Network: "proxy", Allow: []string{"a.example:443"}}},
		{Candidate{File: f, Floor: config.SandboxProfile{Mode: config.SandboxWorkspaceWrite}}, config.SandboxProfile{Mode: "workspace-write", Network: "off"}},
		{Candidate{File: parse(t, "agents:\n  build:\n    permission: {}\n"), Floor: config.SandboxProfile{Mode: config.SandboxReadOnly}}, config.SandboxProfile{Mode: "read-only", Network: "off"}},
		{Candidate{File: parse(t, "agents:\n  build:\n    permission: {}\n")}, config.SandboxProfile{}},
	} {
		got := tc.c.Sandbox(started)
		if !got.AtLeastAsStrict(tc.want) || !tc.want.AtLeastAsStrict(got) || got.Mode != tc.want.Mode {
			t.Errorf("%s %+v: %+v, want %+v", tc.c.Agent, tc.c.Floor, got, tc.want)
		}
	}
}
