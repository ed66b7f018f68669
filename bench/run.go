package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// Run runs one workload and writes its JSON line to out.
func Run(ctx context.Context, o Options, out io.Writer) (Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var (
		r   Result
		err error
	)
	switch o.Workload {
	case "raw":
		r, err = runRaw(ctx, o)
	case "w1":
		r, err = runW1(ctx, o, "echo")
	case "w1fx":
		r, err = runW1(ctx, o, "echo_fx")
	case "w2":
		r, err = runW2(ctx, o)
	case "w3", "w4", "c3":
		r, err = runResume(ctx, o)
	case "w5":
		r, err = runW5(ctx, o)
	case "w6":
		r, err = runW6(ctx, o)
	case "c2":
		r, err = runC2(ctx, o)
	case "w2x":
		r, err = runW2x(ctx, o)
	case "w7":
		r, err = runW7(ctx, o)
	case "w8":
		r, err = runW8(ctx, o)
	case "start":
		r, err = runStart(ctx, o)
	}
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", o.Workload, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
		return nil, err
	}
	if o.Stderr != nil {
		summary(o.Stderr, r)
	}
	return r, nil
}

func summary(w io.Writer, r Result) {
	fmt.Fprintf(w, "%s (sync %s):", r["workload"], r["sync"])
	for _, k := range []string{"sync_msgs_per_s", "async_msgs_per_s", "steps_per_s", "p50_ms", "p99_ms",
		"commits_per_step", "raw_sync_msgs_per_s", "raw_async_msgs_per_s", "raw_r3_async_msgs_per_s", "ratio",
		"raw_pipelines_msgs_per_s", "ratio_to_pipelines",
		"w2_steps_per_s", "ratio_to_w2", "w2_echo_steps_per_s", "w2_in_process_steps_per_s", "ratio_to_w2_in_process", "forwarded_calls", "forwarded_share", "no_executor", "sync_cpu_us_per_msg", "async_cpu_us_per_msg",
		"cpu_us_per_step", "w2_cpu_us_per_step", "w2_in_process_cpu_us_per_step", "raw_async_cpu_us_per_msg", "raw_pipelines_cpu_us_per_msg", "rounds", "resume_ms", "resume_ms_runs", "reexecutions",
		"prior_steps", "other_commits",
		"events", "commits", "steps", "rebuild_ms", "rebuild_events_per_s", "rebuild_commits_per_s", "rebuild_cpu_us_per_event",
		"rebuild_runs", "rebuild_steps", "checkpoint_ms", "replayed", "restart_runs", "restart_steps",
		"runs", "runs_per_s", "rss_mb", "checkpoint_mb", "ready_ms", "rss_restarted_mb", "tickets_page_ms", "tickets_page_count",
		"tickets_page_error", "approvals", "approvals_per_s", "verb", "start_ms", "bare_start_ms", "start_cpu_ms", "bare_start_cpu_ms",
		"off_steps_per_s", "sandboxed_steps_per_s", "sandbox_ratio", "sandbox_slowdown", "off_exec_ms", "helper", "helper_start_ms", "helper_warm_ms", "helper_self_start_ms",
		"tasks", "turns", "turns_per_s", "engine_ms_per_turn", "loop_ms_per_turn", "provider_ms_per_turn", "direct_ms_per_turn", "step_ms", "turn_commit_ms", "loop_ratio", "direct_ratio", "baseline_ms_per_turn", "turn_ratio", "alloc_kb_per_turn", "baseline_alloc_kb_per_turn"} {
		if v, ok := r[k]; ok {
			fmt.Fprintf(w, " %s=%v", k, v)
		}
	}
	fmt.Fprintln(w)
}
