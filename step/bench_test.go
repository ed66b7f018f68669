package step_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// BenchmarkCommit measures one W1-shaped commit: encode, publish with
// optimistic concurrency and de-duplication, wait for the ack.
func BenchmarkCommit(b *testing.B) {
	s := steptest.Start(b, "")
	ctx := context.Background()
	ids := events.NewIDSource(nil)
	run := ids.New(time.Now())
	text := strings.Repeat("x", 200)
	args, _ := json.Marshal(map[string]string{"text": text})
	var last uint64
	b.ReportAllocs()
	for b.Loop() {
		c := &events.Commit{ID: ids.New(time.Now()), Run: run, Step: 1, Kind: events.KindStep, At: time.Now(),
			Events: []events.Event{
				events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: args},
				events.PermissionDecided{CallID: "c1", Verdict: events.VerdictAllow, Reason: "allowed",
					Requests: []events.Request{{Action: "echo", Resources: []string{text}}}},
				events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: text}}},
				events.StepFinalized{Calls: 1},
			}}
		seq, err := s.Log.Commit(ctx, c, last)
		if err != nil {
			b.Fatal(err)
		}
		last = seq
	}
}
