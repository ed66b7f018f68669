package commands_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step/steptest"
)

// BenchmarkSubmitStepCalls measures a step of four read-only calls end to
// end: calls without paths (echo), reads of four files (run concurrently),
// and four reads of one file (run one after the other, in model order).
func BenchmarkSubmitStepCalls(b *testing.B) {
	loc := b.TempDir()
	for i := range 4 {
		if err := os.WriteFile(filepath.Join(loc, fmt.Sprintf("f%d.txt", i)), []byte("hello\n"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	shapes := []struct {
		name string
		call func(i int) commands.CallRequest
	}{
		{"echo", func(i int) commands.CallRequest {
			return call(fmt.Sprintf("c%d", i), "echo", map[string]string{"text": "hi"})
		}},
		{"read-4-files", func(i int) commands.CallRequest {
			return call(fmt.Sprintf("c%d", i), "read", builtin.ReadInput{Path: fmt.Sprintf("f%d.txt", i)})
		}},
		{"read-1-file", func(i int) commands.CallRequest {
			return call(fmt.Sprintf("c%d", i), "read", builtin.ReadInput{Path: "f0.txt"})
		}},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			s := steptest.Start(b, "")
			var cnt counter
			h := startHost(b, s, registry(b, &cnt), "bench")
			ctx := ctxT(b)
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
			if err != nil {
				b.Fatal(err)
			}
			calls := make([]commands.CallRequest, 4)
			for i := range calls {
				calls[i] = sh.call(i)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: calls})
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Results) != 4 || out.Results[0].IsError {
					b.Fatalf("outcome %+v", out)
				}
			}
		})
	}
}
