package projection_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// BenchmarkAppendStep encodes a w1-shaped step for a checkpoint: one echo
// call of 200 printable bytes, allowed, with its result.
func BenchmarkAppendStep(b *testing.B) {
	text := make([]byte, 200)
	for i := range text {
		text[i] = byte(' ' + (i*7)%95)
	}
	args, _ := json.Marshal(map[string]string{"text": string(text)})
	s := projection.Step{N: 7, Final: true, Host: "bench", Calls: []projection.Call{{
		ID: "c1", Tool: "echo", Args: args, Identity: strings.Repeat("ab", 32), Attempts: 1,
		Decision: &events.PermissionDecided{CallID: "c1", Verdict: "allow", Reason: `allowed by rule * "*" (built-in default)`,
			Rule:     &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"},
			Requests: []events.Request{{Action: "echo", Resources: []string{"*"}, Save: []string{"*"}}}},
		Result: &events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: string(text)}}},
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := projection.AppendStep(&s); err != nil {
			b.Fatal(err)
		}
	}
}
