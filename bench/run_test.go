package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/internal/enginebin"
)

// engineBin is the engine binary the workloads' processes run, built once.
var engineBin string

// TestMain runs the sandbox helper when this binary is re-executed as it
// (w7's sandboxed half), then the tests.
func TestMain(m *testing.M) {
	sandbox.MaybeRun()
	enginebin.Main(m, "stepgate-bench-test", &engineBin)
}

// The keys of bench/WORKLOADS.md, which tools read.
var workloadKeys = map[string][]string{
	"w5":    {"events", "rebuild_events_per_s", "ready_ms"},
	"w6":    {"runs", "rss_mb", "ready_ms", "tickets_page_ms", "approvals_per_s"},
	"c2":    {"steps_per_s", "raw_async_msgs_per_s", "ratio", "raw_r3_async_msgs_per_s"},
	"c3":    {"resume_ms", "resume_ms_runs", "reexecutions"},
	"w2x":   {"steps_per_s", "raw_async_msgs_per_s", "ratio", "forwarded_calls", "ratio_to_w2"},
	"start": {"start_ms", "bare_start_ms", "ratio"},
	"w7":    {"steps_per_s", "off_steps_per_s", "sandboxed_steps_per_s", "sandbox_ratio", "helper_start_ms", "helper_warm_ms"},
	"w8":    {"turns_per_s", "engine_ms_per_turn", "loop_ms_per_turn", "provider_ms_per_turn", "direct_ms_per_turn", "step_ms", "turn_commit_ms", "ratio", "loop_ratio", "direct_ratio", "baseline_ms_per_turn", "turn_ratio", "alloc_kb_per_turn", "baseline_alloc_kb_per_turn"},
}

// The quick cluster, rebuild, waiting and fleet workloads run to the end
// and print one JSON line with every key of WORKLOADS.md, its rates
// positive, nothing executed twice, every approval made, every run and step
// rebuilt, in the fleet some calls forwarded and none refused for want
// of a holder, and in start both binaries timed.
func TestQuickWorkloadsHaveTheirKeys(t *testing.T) {
	for _, w := range []string{"c2", "c3", "w5", "w6", "w2x", "w7", "w8", "start"} {
		t.Run(w, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var out bytes.Buffer
			o := Options{Workload: w, Quick: true, Dir: t.TempDir(), Binary: engineBin}
			if _, err := Run(ctx, o, &out); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON line: %q: %v", out.String(), err)
			}
			t.Logf("%s", bytes.TrimSpace(out.Bytes()))
			for _, k := range append([]string{"workload", "sync", "quick"}, workloadKeys[w]...) {
				if _, ok := got[k]; !ok {
					t.Errorf("no key %q", k)
				}
			}
			if got["workload"] != w || got["sync"] != "interval" || got["quick"] != true {
				t.Errorf("workload, sync, quick = %v, %v, %v", got["workload"], got["sync"], got["quick"])
			}
			for _, k := range []string{"steps_per_s", "raw_r3_async_msgs_per_s", "resume_ms", "rss_mb", "approvals_per_s",
				"forwarded_calls", "ratio_to_w2", "start_ms", "bare_start_ms", "off_steps_per_s", "sandbox_ratio",
				"turns_per_s", "engine_ms_per_turn", "loop_ms_per_turn", "provider_ms_per_turn", "direct_ms_per_turn", "step_ms", "turn_commit_ms"} {
				if v, ok := got[k]; ok && !(v.(float64) > 0) {
					t.Errorf("%s = %v, want > 0", k, v)
				}
			}
			if v, ok := got["reexecutions"]; ok && v.(float64) != 0 {
				t.Errorf("reexecutions = %v, want 0", v)
			}
			if v, ok := got["no_executor"]; ok && v.(float64) != 0 {
				t.Errorf("no_executor = %v, want 0", v)
			}
			if v, ok := got["approvals"]; ok && v.(float64) != 1000 {
				t.Errorf("approvals = %v, want 1000", v)
			}
			if w == "w5" {
				checkRebuilt(t, got)
			}
		})
	}
}

// checkRebuilt checks w5's line: the stream held the quick size's 20,000
// events (a few more at most: the last step may pass the mark), the rebuild
// and the restarted host hold every run and step the fill wrote, and the
// restart replayed nothing past the checkpoint.
func checkRebuilt(t *testing.T, got map[string]any) {
	t.Helper()
	num := func(k string) float64 {
		v, ok := got[k].(float64)
		if !ok {
			t.Errorf("%s = %v, want a number", k, got[k])
		}
		return v
	}
	if ev := num("events"); ev < 20000 || ev > 20010 {
		t.Errorf("events = %v, want 20,000", ev)
	}
	runs, steps := num("runs"), num("steps")
	if runs < 2 || steps < 100*runs/2 {
		t.Errorf("runs, steps = %v, %v: want runs of 100 steps", runs, steps)
	}
	for _, who := range []string{"rebuild", "restart"} {
		if r, s := num(who+"_runs"), num(who+"_steps"); r != runs || s != steps {
			t.Errorf("%s holds %v runs, %v steps; the fill wrote %v, %v", who, r, s, runs, steps)
		}
	}
	if v := num("replayed"); v != 0 {
		t.Errorf("replayed = %v after a clean close, want 0", v)
	}
	for _, k := range []string{"rebuild_events_per_s", "ready_ms"} {
		if v := num(k); !(v > 0) {
			t.Errorf("%s = %v, want > 0", k, v)
		}
	}
}
