package projection_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"pgregory.net/rapid"
)

// text is any string, with the characters JSON escapes and invalid UTF-8
// often enough.
func text(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'"', '\\', '\n', 0, 0x1f, 'é', '💥', '\u2028', 'a', '<', '&'})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	).Draw(t, label)
}

func genCall(t *rapid.T) projection.Call {
	c := projection.Call{ID: text(t, "id"), Tool: text(t, "tool"), Identity: text(t, "identity"),
		Attempts: rapid.IntRange(0, 3).Draw(t, "attempts"), Ticket: text(t, "ticket")}
	if rapid.Bool().Draw(t, "args") {
		c.Args, _ = json.Marshal(map[string]string{text(t, "key"): text(t, "value")})
	}
	if rapid.Bool().Draw(t, "decided") {
		d := events.PermissionDecided{CallID: c.ID, Verdict: text(t, "verdict"), Reason: text(t, "reason"), Observed: text(t, "observed")}
		if rapid.Bool().Draw(t, "rule") {
			d.Rule = &events.Rule{Action: text(t, "action"), Resource: text(t, "resource"), Effect: "allow", Source: text(t, "source")}
		}
		if rapid.Bool().Draw(t, "requests") {
			d.Requests = []events.Request{{Action: text(t, "raction"), Resources: []string{text(t, "res")}, Save: []string{"*"}, Ask: rapid.Bool().Draw(t, "ask")}}
		}
		c.Decision = &d
	}
	if rapid.Bool().Draw(t, "result") {
		r := events.ToolResultRecorded{CallID: c.ID, IsError: rapid.Bool().Draw(t, "is_error")}
		for range rapid.IntRange(0, 2).Draw(t, "parts") {
			r.Parts = append(r.Parts, events.Part{Type: text(t, "type"), Text: text(t, "text"), MIME: text(t, "mime"),
				Data: rapid.SliceOf(rapid.Byte()).Draw(t, "data")})
		}
		if rapid.Bool().Draw(t, "files") {
			r.Files = []string{text(t, "file")}
		}
		if rapid.Bool().Draw(t, "structured") {
			r.Structured, _ = json.Marshal([]string{text(t, "item")})
		}
		c.Result = &r
		if rapid.Bool().Draw(t, "ran") {
			c.RanOn = text(t, "ran_on")
		}
	}
	return c
}

// The checkpoint's step encoder and encoding/json write steps that decode
// to the same step.
func TestStepEncodingAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := projection.Step{N: rapid.IntRange(1, 1<<20).Draw(t, "n"), Final: rapid.Bool().Draw(t, "final"), Host: text(t, "host")}
		if rapid.Bool().Draw(t, "any calls") {
			s.Calls = rapid.SliceOfN(rapid.Custom(genCall), 0, 3).Draw(t, "calls")
		}
		ref, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := projection.AppendStep(&s)
		if err != nil {
			t.Fatal(err)
		}
		var want, have projection.Step
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatalf("hand encoding does not decode: %v\n%s", err, got)
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("(-encoding/json +hand):\n%s\n%s", diff, got)
		}
	})
}

// Arguments that are not JSON make the step unwritable, never a checkpoint
// that cannot be read.
func TestStepEncodingRefusesInvalidArgs(t *testing.T) {
	s := projection.Step{N: 1, Calls: []projection.Call{{ID: "c1", Tool: "echo", Args: json.RawMessage(`{"text":`)}}}
	if _, err := projection.AppendStep(&s); err == nil {
		t.Fatal("a call with broken arguments was encoded")
	}
}
