package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/stepgate/stepgate/commands"
)

// script is one run's steps, made before the clock runs (the model's side:
// random text and its JSON are not the engine's work).
type script []commands.SubmitStepRequest

// newScript starts a run and prepares n steps, one call of tool each.
func newScript(ctx context.Context, h *commands.Host, tool string, n int) (script, error) {
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: "/"})
	if err != nil {
		return nil, err
	}
	reqs := make(script, n)
	for i := range reqs {
		args, _ := json.Marshal(map[string]string{"text": echoText()})
		reqs[i] = commands.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []commands.CallRequest{{ID: "c1", Tool: tool, Args: args}}}
	}
	return reqs, nil
}

// drive submits the steps in order, each committed before the next, and
// returns each step's latency.
func (s script) drive(ctx context.Context, h *commands.Host) ([]time.Duration, error) {
	lat := make([]time.Duration, len(s))
	for i, req := range s {
		start := time.Now()
		out, err := h.SubmitStep(ctx, req)
		lat[i] = time.Since(start)
		if err != nil {
			return nil, err
		}
		if r := out.Results[0]; r.IsError {
			return nil, fmt.Errorf("step %d: %s", i+1, r.Content)
		}
	}
	return lat, nil
}

// runW1 is w1 (tool echo) or w1fx (tool echo_fx).
func runW1(ctx context.Context, o Options, tool string) (Result, error) {
	sz := o.sizes()
	rawSync, _, err := rawRates(ctx, o, sz.rawMsgs)
	if err != nil {
		return nil, err
	}
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	h, err := e.host(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	sc, err := newScript(ctx, h, tool, sz.w1Steps)
	if err != nil {
		return nil, err
	}
	before, err := h.Log.LastSeq(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	lat, err := sc.drive(ctx, h)
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	after, err := h.Log.LastSeq(ctx)
	if err != nil {
		return nil, err
	}
	r := newResult(o)
	steps := perSecond(sz.w1Steps, elapsed)
	r["steps_per_s"] = steps
	r["p50_ms"] = percentile(lat, 50)
	r["p99_ms"] = percentile(lat, 99)
	r["commits_per_step"] = round(float64(after-before) / float64(sz.w1Steps))
	r["raw_sync_msgs_per_s"] = rawSync
	r["ratio"] = ratio(steps, rawSync)
	return r, nil
}

// runW2 drives concurrent runs.
func runW2(ctx context.Context, o Options) (Result, error) {
	sz := o.sizes()
	_, rawAsync, err := rawRates(ctx, o, sz.rawMsgs)
	if err != nil {
		return nil, err
	}
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	h, err := e.host(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	scripts := make([]script, sz.w2Runs)
	for i := range scripts {
		if scripts[i], err = newScript(ctx, h, "echo", sz.w2Steps); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, sz.w2Runs)
	start := time.Now()
	for i, sc := range scripts {
		wg.Go(func() { _, errs[i] = sc.drive(ctx, h) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	r := newResult(o)
	steps := perSecond(sz.w2Runs*sz.w2Steps, elapsed)
	r["steps_per_s"] = steps
	r["raw_async_msgs_per_s"] = rawAsync
	r["ratio"] = ratio(steps, rawAsync)
	return r, nil
}
