package bench

import (
	"context"
	"encoding/json"
	"errors"
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
	return newScriptAt(ctx, h, "/", tool, n)
}

// newScriptAt is newScript for a run in location.
func newScriptAt(ctx context.Context, h *commands.Host, location, tool string, n int) (script, error) {
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: location})
	if err != nil {
		return nil, err
	}
	return scriptFor(info.Run, tool, n)
}

// scriptFor prepares n steps of run, numbered from 1.
func scriptFor(run, tool string, n int) (script, error) {
	reqs := make(script, n)
	for i := range reqs {
		args, _ := json.Marshal(map[string]string{"text": echoText()})
		reqs[i] = commands.SubmitStepRequest{Run: run, Step: i + 1,
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

// engineEnv is a fresh embedded server with one engine host, warmed up.
type engineEnv struct {
	env  *env
	host *commands.Host
}

func newEngineEnv(ctx context.Context, o Options, tool string) (*engineEnv, error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	h, err := e.host(ctx)
	if err != nil {
		e.close()
		return nil, err
	}
	ee := &engineEnv{env: e, host: h}
	if err := warmUp(ctx, h, tool); err != nil {
		ee.close()
		return nil, err
	}
	return ee, nil
}

// warmUp drives one run of warmup steps of tool on h, before any clock runs.
func warmUp(ctx context.Context, h *commands.Host, tool string) error {
	warm, err := newScript(ctx, h, tool, warmup)
	if err == nil {
		_, err = warm.drive(ctx, h)
	}
	return err
}

func (ee *engineEnv) close() {
	ee.host.Close()
	ee.env.close()
}

// w1Round measures one run of n steps on a fresh engine.
func w1Round(ctx context.Context, o Options, tool string, n int) (rate float64, lat []time.Duration, commitsPerStep float64, err error) {
	ee, err := newEngineEnv(ctx, o, tool)
	if err != nil {
		return 0, nil, 0, err
	}
	defer ee.close()
	h := ee.host
	sc, err := newScript(ctx, h, tool, n)
	if err != nil {
		return 0, nil, 0, err
	}
	before, err := h.Log.LastSeq(ctx)
	if err != nil {
		return 0, nil, 0, err
	}
	w, err := timed(n, func() (err error) {
		lat, err = sc.drive(ctx, h)
		return err
	})
	if err != nil {
		return 0, nil, 0, err
	}
	after, err := h.Log.LastSeq(ctx)
	if err != nil {
		return 0, nil, 0, err
	}
	return w.rate(), lat, float64(after-before) / float64(n), nil
}

// runW1 is w1 (tool echo) or w1fx (tool echo_fx): rounds alternate the raw
// baseline and the engine, each on a fresh server, and the medians are
// compared.
func runW1(ctx context.Context, o Options, tool string) (Result, error) {
	sz := o.sizes()
	var raws, rates, commits []float64
	var lat []time.Duration
	for range sz.rounds {
		raw, _, err := rawRates(ctx, o, sz.w1Steps, 0)
		if err != nil {
			return nil, err
		}
		rate, l, cps, err := w1Round(ctx, o, tool, sz.w1Steps)
		if err != nil {
			return nil, err
		}
		raws, rates, commits = append(raws, raw.rate()), append(rates, rate), append(commits, cps)
		lat = append(lat, l...)
	}
	r := newResult(o)
	steps, rawSync := median(rates), median(raws)
	r["steps_per_s"] = steps
	r["p50_ms"] = percentile(lat, 50)
	r["p99_ms"] = percentile(lat, 99)
	r["commits_per_step"] = round(median(commits))
	r["raw_sync_msgs_per_s"] = rawSync
	r["ratio"] = ratio(steps, rawSync)
	r["rounds"] = sz.rounds
	return r, nil
}

// w2Round measures runs concurrent runs of n steps each on a fresh engine.
func w2Round(ctx context.Context, o Options, runs, n int) (window, error) {
	ee, err := newEngineEnv(ctx, o, "echo")
	if err != nil {
		return window{}, err
	}
	defer ee.close()
	return w2Drive(ctx, ee.host, runs, n)
}

// w2Drive prepares runs runs of n steps on h, then drives them concurrently
// in one window.
func w2Drive(ctx context.Context, h *commands.Host, runs, n int) (window, error) {
	var err error
	scripts := make([]script, runs)
	for i := range scripts {
		if scripts[i], err = newScript(ctx, h, "echo", n); err != nil {
			return window{}, err
		}
	}
	return timed(runs*n, func() error {
		var wg sync.WaitGroup
		errs := make([]error, runs)
		for i, sc := range scripts {
			wg.Go(func() { _, errs[i] = sc.drive(ctx, h) })
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

// runW2 drives concurrent runs, in rounds alternating with the raw
// baselines.
func runW2(ctx context.Context, o Options) (Result, error) {
	sz := o.sizes()
	total := sz.w2Runs * sz.w2Steps
	var asyncs, pipes, steps []window
	for range sz.rounds {
		// As many messages as the engine's window has steps. The sync
		// phase runs first, unused, as in raw: the async window meets the
		// stream raw's does.
		_, async, err := rawRates(ctx, o, total, total)
		if err != nil {
			return nil, err
		}
		pipe, err := rawConcurrent(ctx, o, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		w, err := w2Round(ctx, o, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		asyncs, pipes, steps = append(asyncs, async), append(pipes, pipe), append(steps, w)
	}
	r := w2Result(o, asyncs, pipes, steps)
	r["rounds"] = sz.rounds
	return r, nil
}

// w2Result is w2's line from its rounds' windows: the engine's steps and
// the raw baselines measured beside them (asynchronous, and the same shape
// without the engine: one synchronous publisher per run, each commit
// acknowledged before the next, the ceiling of a workload whose runs commit
// step by step). The CPU time is the whole process's (server, client,
// engine, collector) per step or message: on a machine with few cores the
// rates follow these.
func w2Result(o Options, asyncs, pipes, steps []window) Result {
	r := newResult(o)
	rate := medianOf(steps, window.rate)
	rawAsync, rawPipelines := medianOf(asyncs, window.rate), medianOf(pipes, window.rate)
	r["steps_per_s"] = rate
	r["raw_async_msgs_per_s"] = rawAsync
	r["ratio"] = ratio(rate, rawAsync)
	r["raw_pipelines_msgs_per_s"] = rawPipelines
	r["ratio_to_pipelines"] = ratio(rate, rawPipelines)
	r["cpu_us_per_step"] = medianOf(steps, window.cpuPer)
	r["raw_async_cpu_us_per_msg"] = medianOf(asyncs, window.cpuPer)
	r["raw_pipelines_cpu_us_per_msg"] = medianOf(pipes, window.cpuPer)
	return r
}
