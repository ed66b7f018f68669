package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from what the code prints (-want +got); if the change is meant, run the test with -update and check the new file in:\n%s", name, diff)
	}
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
	timeline(&b, buildShow(commands.WireRun(fixtureRun()), nil, nil), palette{})
	golden(t, "timeline.golden", b.Bytes())
}

func TestShowJSONGolden(t *testing.T) {
	b, err := json.MarshalIndent(fixtureRun(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "show.json.golden", append(b, '\n'))
}
