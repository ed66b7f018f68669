package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/internal/enginebin"
)

// engineBin is the engine binary the workloads' processes run, built once.
var engineBin string

func TestMain(m *testing.M) { enginebin.Main(m, "stepgate-bench-test", &engineBin) }

// The keys of bench/WORKLOADS.md, which tools read.
var workloadKeys = map[string][]string{
	"w6": {"runs", "rss_mb", "ready_ms", "tickets_page_ms", "approvals_per_s"},
	"c2": {"steps_per_s", "raw_async_msgs_per_s", "ratio", "raw_r3_async_msgs_per_s"},
	"c3": {"resume_ms", "resume_ms_runs", "reexecutions"},
}

// The quick cluster and waiting workloads run to the end and print one
// JSON line with every key of WORKLOADS.md, its rates positive, nothing
// executed twice, every approval made.
func TestQuickWorkloadsHaveTheirKeys(t *testing.T) {
	for _, w := range []string{"c2", "c3", "w6"} {
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
			for _, k := range []string{"steps_per_s", "raw_r3_async_msgs_per_s", "resume_ms", "rss_mb", "approvals_per_s"} {
				if v, ok := got[k]; ok && !(v.(float64) > 0) {
					t.Errorf("%s = %v, want > 0", k, v)
				}
			}
			if v, ok := got["reexecutions"]; ok && v.(float64) != 0 {
				t.Errorf("reexecutions = %v, want 0", v)
			}
			if v, ok := got["approvals"]; ok && v.(float64) != 1000 {
				t.Errorf("approvals = %v, want 1000", v)
			}
		})
	}
}
