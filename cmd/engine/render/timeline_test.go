package render

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/internal/golden"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/projection/fold"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenFile compares got with testdata/name, or rewrites it under -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, got, *update)
}

func fixtureRun() *projection.Run {
	text := func(s string) []events.Part { return []events.Part{{Type: "text", Text: s}} }
	allow := &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"}
	return &projection.Run{
		ID:       "01JDZ0000000000000000000RR",
		Snapshot: events.RunStarted{Agent: "build", Location: "/work/space", Project: "p1", EngineVersion: "0.0.0-dev", PolicyDigest: "0123456789abcdef"},
		Status:   projection.StatusEnded,
		End:      &events.RunEnded{Cause: events.CauseCompleted},
		Steps: []projection.Step{
			{N: 1, Final: true, Calls: []projection.Call{
				{ID: "c1", Tool: "echo", Args: json.RawMessage(`{"text":"hello"}`),
					Decision: &events.PermissionDecided{Verdict: "allow", Rule: allow}, Result: &events.ToolResultRecorded{Parts: text("hello")}, RanOn: "h1"},
				{ID: "c2", Tool: "read_file", Args: json.RawMessage(`{"path":"secrets/key"}`),
					Decision: &events.PermissionDecided{Verdict: "block", Rule: &events.Rule{Action: "read", Resource: "secrets/*", Effect: "deny", Source: "run"}},
					Result:   &events.ToolResultRecorded{Parts: text(`blocked: denied by rule read "secrets/*" (run override)`), IsError: true}},
			}},
			{N: 2, Final: false, Calls: []projection.Call{
				{ID: "c3", Tool: "echo_fx", Args: json.RawMessage(`{"text":"two\nlines"}`),
					Decision: &events.PermissionDecided{Verdict: "allow", Rule: allow}, Attempts: 1},
			}},
		},
		State: map[string]json.RawMessage{"todos": json.RawMessage(`[{"content":"read the spec","status":"completed","priority":"high"},{"content":"write tests","status":"in_progress","priority":"medium"},{"content":"ship","status":"pending","priority":"low"}]`)},
	}
}

func TestTimelineGolden(t *testing.T) {
	var b bytes.Buffer
	Timeline(&b, BuildShow(commands.WireRun(fixtureRun()), nil, nil), Palette{})
	goldenFile(t, "timeline.golden", b.Bytes())
}

func TestShowJSONGolden(t *testing.T) {
	b, err := json.MarshalIndent(fixtureRun(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "show.json.golden", append(b, '\n'))
}

// engine show says the profile a call ran under when it differs from the
// run's pinned one (a host's --sandbox floor tightened it there), and not
// when it is the pinned one.
func TestShowSaysAFlooredCallsProfile(t *testing.T) {
	rec := &events.SandboxRecord{Mode: "workspace-write", Network: "off", LandlockABI: 7, Namespaces: []string{"user", "mount", "pid", "net"}, Seccomp: true,
		Profile: &events.SandboxProfile{Mode: "workspace-write", Network: "off"}}
	for _, tc := range []struct {
		pinned *events.SandboxProfile
		want   string
	}{
		{nil, "        sandbox workspace-write, network off (the run pinned off: the host's --sandbox floor tightened it)\n"},
		{&events.SandboxProfile{Mode: "workspace-write", Network: "off"}, ""},
	} {
		d := &Show{Run: &sgclient.Run{ID: "r", Snapshot: events.RunStarted{Agent: "build", Sandbox: tc.pinned}},
			Timeline: TimelineView{Steps: []StepView{{N: 1, Final: true, Calls: []CallView{{ID: "c1", Tool: "bash", Verdict: "allow",
				Result: &ResultView{Preview: "ok", Bytes: 2}, Sandbox: rec}}}}}}
		var b strings.Builder
		Timeline(&b, d, Palette{})
		out := b.String()
		if !strings.Contains(out, "[2 B, sandbox workspace-write, network off, landlock 7, seccomp, namespaces user mount pid net]\n") {
			t.Errorf("pinned %v: the call's line does not say what was enforced:\n%s", tc.pinned, out)
		}
		if got := strings.Contains(out, "floor tightened it"); got != (tc.want != "") || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("pinned %v: show printed\n%s\nwant the line %q", tc.pinned, out, tc.want)
		}
	}
}

// The results the engine records for an allowed call it settled without
// starting it say so as the run's fold reads them: show never says such
// a call ran anywhere.
func TestShowNeverSaysACallThatDidNotStartRan(t *testing.T) {
	for _, text := range []string{commands.LeaseLostResult, fold.NotRunPrefix + context.Canceled.Error()} {
		r := fold.Run{}
		for i, c := range []*events.Commit{
			{ID: "c1", Run: "R", Kind: events.KindStart, Host: "h1", Events: []events.Event{events.RunStarted{Agent: "build"}}},
			{ID: "c2", Run: "R", Step: 1, Kind: events.KindDecide, Host: "h1", Prev: "c1", Events: []events.Event{
				events.ToolCallRequested{CallID: "a", Tool: "bash"}, events.PermissionDecided{CallID: "a", Verdict: events.VerdictAllow},
				events.ToolCallStarted{CallID: "a", Attempt: 1}}},
			{ID: "c3", Run: "R", Step: 1, Kind: events.KindSettle, Host: "h1", Prev: "c2", Events: []events.Event{
				events.ToolResultRecorded{CallID: "a", IsError: true, Parts: []events.Part{{Type: "text", Text: text}}},
				events.StepFinalized{Calls: 1}}},
		} {
			if err := r.Apply(uint64(i+1), c); err != nil {
				t.Fatal(err)
			}
		}
		var b bytes.Buffer
		Timeline(&b, BuildShow(commands.WireRun(&r), nil, nil), Palette{})
		if strings.Contains(b.String(), "ran on") {
			t.Errorf("a call settled with %q: show says\n%s", text, b.String())
		}
	}
}
