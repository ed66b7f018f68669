package commands_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// BenchmarkTurnCycle measures what a model-driven turn of two read-only
// calls (w8's: a read of a small file and a glob) asks of a host, back to
// back: the step alone in a plain run
// ("plain"), the turn recorded and then its step ("record-first"), and
// the step that brings its turn ("with-step": the turn's commit under way
// while the calls are planned and run).
func BenchmarkTurnCycle(b *testing.B) {
	const readArgs, globArgs = `{"path":"notes.txt"}`, `{"pattern":"*.txt"}`
	for _, mode := range []string{"plain", "record-first", "with-step"} {
		b.Run(mode, func(b *testing.B) {
			s := steptest.Start(b, "")
			var cnt counter
			h := startHost(b, s, registry(b, &cnt), "bench")
			ctx := ctxT(b)
			loc := b.TempDir()
			if err := os.WriteFile(filepath.Join(loc, "notes.txt"), []byte("Ship the release on Friday.\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			req := commands.StartRunRequest{Location: loc}
			if mode != "plain" {
				req.Model = &events.ModelSettings{Provider: "openai", Model: "m", Task: "echo twice"}
			}
			info, err := h.StartRun(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				ids := [2]string{fmt.Sprintf("call_%d_a", n), fmt.Sprintf("call_%d_b", n)}
				step := commands.SubmitStepRequest{Run: info.Run, Step: n,
					Calls: []commands.CallRequest{{ID: ids[0], Tool: "read", Args: []byte(readArgs)}, {ID: ids[1], Tool: "glob", Args: []byte(globArgs)}}}
				tr := events.ModelTurnRecorded{Turn: n, Response: fmt.Sprintf("resp_%d", n), Stop: "tool_calls",
					Calls: []events.ModelCall{{ID: ids[0], Name: "read", Args: readArgs}, {ID: ids[1], Name: "glob", Args: globArgs}},
					Usage: events.ModelUsage{InputTokens: 100, OutputTokens: 20}}
				switch mode {
				case "record-first":
					if _, err := h.RecordTurn(ctx, commands.RecordTurnRequest{Run: info.Run, Turn: tr}); err != nil {
						b.Fatal(err)
					}
				case "with-step":
					step.Turn = &tr
				}
				if _, err := h.SubmitStep(ctx, step); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMaterialize measures a run's catalogue asked for again, the
// registry unchanged: what the agent loop asks before every model request.
func BenchmarkMaterialize(b *testing.B) {
	s := steptest.Start(b, "")
	var cnt counter
	h := startHost(b, s, registry(b, &cnt), "bench")
	ctx := ctxT(b)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Materialize(ctx, commands.MaterializeRequest{Run: info.Run}); err != nil {
			b.Fatal(err)
		}
	}
}
