package commands_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// BenchmarkSubmitStepParallel is w2's shape over a long run: concurrent
// runs of one-call read-only steps on one host, checkpoints included. It
// reports the p99 and the worst step latency besides the time per step.
func BenchmarkSubmitStepParallel(b *testing.B) {
	s := steptest.Start(b, "")
	var cnt counter
	h := startHost(b, s, registry(b, &cnt), "bench")
	ctx := ctxT(b)
	args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200)})
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	b.SetParallelism(10)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: "/"})
		if err != nil {
			b.Error(err)
			return
		}
		var mine []time.Duration
		for n := 1; pb.Next(); n++ {
			start := time.Now()
			if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
				Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	}
}
