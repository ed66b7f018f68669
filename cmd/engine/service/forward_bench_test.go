package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
)

// BenchmarkForwardedStep is what a forwarded call costs: a step of one
// read call (of a 200-byte file: a tool that acts on the location, so it
// runs only on a holder) of a run in B's location, submitted in process
// to B, which holds it (here), and to A, which does not and forwards the
// whole request over NATS to B's own subject (forwarded). The difference
// of the two is the forward's cost: the envelope's encoding, the request
// and its answer through the server, and B's decoding of both. Beside
// ns/op (the step's latency, one step at a time) it reports cpu-ns/op,
// the process's CPU time per step (server and both hosts), which a loaded
// machine moves less.
func BenchmarkForwardedStep(b *testing.B) {
	e, mb, root := fleetOfTwo(b)
	loc := filepath.Join(root, "b", "w")
	if err := os.WriteFile(filepath.Join(loc, "f.txt"), []byte(strings.Repeat("x", 199)+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"path": "f.txt"})
	for _, side := range []struct {
		name string
		to   *commands.Host
	}{{"here", mb.Host}, {"forwarded", e.Host}} {
		b.Run(side.name, func(b *testing.B) {
			info, err := mb.Host.StartRun(ctx, commands.StartRunRequest{Location: loc})
			if err != nil {
				b.Fatal(err)
			}
			if err := side.to.Proj.Sync(ctx, side.to.Log); err != nil { // the run is known where the step lands
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			n := 1
			for ; b.Loop(); n++ {
				out, err := side.to.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
					Calls: []commands.CallRequest{{ID: "c1", Tool: "read", Args: args}}})
				if err != nil {
					b.Fatalf("step %d: %v", n, err)
				}
				if r := out.Results[0]; r.IsError {
					b.Fatalf("step %d: %s", n, r.Content)
				}
			}
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(n-1), "cpu-ns/op")
			}
		})
	}
}
