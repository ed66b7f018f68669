package commands_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// BenchmarkSubmitStep measures one read-only step (one commit) end to end on
// an embedded server: decide, execute, commit, fold.
func BenchmarkSubmitStep(b *testing.B) {
	for _, tool := range []string{"echo", "echo_fx"} {
		b.Run(tool, func(b *testing.B) {
			s := steptest.Start(b, "")
			var cnt counter
			h := startHost(b, s, registry(b, &cnt), "bench")
			ctx := ctxT(b)
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: "/"})
			if err != nil {
				b.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200)})
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				_, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
					Calls: []commands.CallRequest{{ID: "c1", Tool: tool, Args: args}}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
