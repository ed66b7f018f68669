package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// runW2x is w2 on a fleet of two hosts (see servedRound), in rounds
// alternating with its baselines, each on a fresh server: the raw
// asynchronous rate (w2's); w2 with w2x's tool on one host driven the same
// way, through the service's queue group (w2_steps_per_s: the baseline
// ratio_to_w2 divides by, so that the ratio is what a second host and the
// locations split between the two cost, and nothing else); the same in
// process, without the service (ratio_to_w2_in_process); and w2 itself,
// with echo (w2_echo_steps_per_s), for what the tool costs beside it.
//
// The tool is read, of a 200-byte file in the run's location, not echo:
// echo acts on no location, so it runs wherever a step lands and nothing
// would be forwarded. read is what a fleet forwards (a built-in that
// resolves a path in the location, checked against the run's place before
// it runs), and every host has it, as every `engine serve` has; the
// baselines use it too, so the ratios measure the fleet and not the tool.
func runW2x(ctx context.Context, o Options) (Result, error) {
	sz := o.sizes()
	total := sz.w2Runs * sz.w2Steps
	var asyncs, echoes, ones, alones, fleets []window
	var forwarded []float64
	var noExecutor int64
	for range sz.rounds {
		_, async, err := rawRates(ctx, o, total, total)
		if err != nil {
			return nil, err
		}
		echo, err := w2Round(ctx, o, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, fmt.Errorf("w2: %w", err)
		}
		one, err := w2PlacedRound(ctx, o, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, fmt.Errorf("w2 baseline: %w", err)
		}
		alone, _, _, err := servedRound(ctx, o, false, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, fmt.Errorf("one served host: %w", err)
		}
		fleet, fwd, noExec, err := servedRound(ctx, o, true, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, fmt.Errorf("two hosts: %w", err)
		}
		asyncs, echoes = append(asyncs, async), append(echoes, echo)
		ones, alones, fleets = append(ones, one), append(alones, alone), append(fleets, fleet)
		forwarded, noExecutor = append(forwarded, float64(fwd)), noExecutor+noExec
	}
	r := newResult(o)
	rate, rawAsync := medianOf(fleets, window.rate), medianOf(asyncs, window.rate)
	w2, alone := medianOf(ones, window.rate), medianOf(alones, window.rate)
	r["steps_per_s"] = rate
	r["raw_async_msgs_per_s"] = rawAsync
	r["ratio"] = ratio(rate, rawAsync)
	r["w2_steps_per_s"] = alone
	r["ratio_to_w2"] = ratio(rate, alone)
	r["w2_echo_steps_per_s"] = medianOf(echoes, window.rate)
	r["w2_in_process_steps_per_s"] = w2
	r["ratio_to_w2_in_process"] = ratio(rate, w2)
	fwd := median(forwarded)
	r["forwarded_calls"] = fwd
	r["forwarded_share"] = ratio(fwd, float64(total))
	r["no_executor"] = noExecutor
	r["cpu_us_per_step"] = medianOf(fleets, window.cpuPer)
	r["w2_cpu_us_per_step"] = medianOf(alones, window.cpuPer)
	r["w2_in_process_cpu_us_per_step"] = medianOf(ones, window.cpuPer)
	r["tool"], r["hosts"], r["rounds"] = placedTool, 2, sz.rounds
	return r, nil
}

// w2PlacedRound is w2 with placedTool: runs concurrent runs of n steps on
// one host, in process, each run in a location of its own.
func w2PlacedRound(ctx context.Context, o Options, runs, n int) (window, error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return window{}, err
	}
	defer e.close()
	h, err := e.host(ctx)
	if err != nil {
		return window{}, err
	}
	defer h.Close()
	root := filepath.Join(e.dir, "locations")
	start := func(name string, n int) (script, error) {
		loc := filepath.Join(root, name)
		if err := makeLocation(loc); err != nil {
			return nil, err
		}
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
		if err != nil {
			return nil, err
		}
		return placedScript(info.Run, n), nil
	}
	warm, err := start("warm", warmup)
	if err != nil {
		return window{}, err
	}
	if _, err := warm.drive(ctx, h); err != nil {
		return window{}, err
	}
	scripts := make([]script, runs)
	for i := range scripts {
		if scripts[i], err = start(fmt.Sprintf("r%d", i), n); err != nil {
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

// servedRound drives runs concurrent runs of n placedTool steps through
// the service on a fresh server, from one client connection. The runs'
// locations alternate between root/a and root/b. With fleet, two hosts
// serve: A declares root/a/*, B root/b/*, so a step the queue group hands
// to the host that does not hold its run's location is forwarded to the
// one that does (forwarded counts them, over both hosts, in the window);
// without, one host declares both. Afterwards every step is checked to
// have been committed by its run's holder.
func servedRound(ctx context.Context, o Options, fleet bool, runs, n int) (w window, forwarded, noExecutor int64, err error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return window{}, 0, 0, err
	}
	defer e.close()
	root := filepath.Join(e.dir, "locations")
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	specs := []hostSpec{{name: "A", globs: []string{a + "/*", b + "/*"}}}
	if fleet {
		specs = []hostSpec{{name: "A", globs: []string{a + "/*"}}, {name: "B", globs: []string{b + "/*"}}}
	}
	var count placementCount
	hosts := make([]*servedHost, len(specs))
	for i, spec := range specs {
		if hosts[i], err = serveHost(ctx, e, spec, &count); err != nil {
			return window{}, 0, 0, err
		}
		defer func() { err = errors.Join(err, hosts[i].stop()) }()
	}
	nc, err := e.srv.Connect()
	if err != nil {
		return window{}, 0, 0, err
	}
	c := client.New(nc)
	defer c.Close()
	locs := make([]string, runs)
	for i := range locs {
		locs[i] = filepath.Join([]string{a, b}[i%2], fmt.Sprintf("r%d", i))
	}
	for _, loc := range append([]string{filepath.Join(a, "warm"), filepath.Join(b, "warm")}, locs...) {
		if err := makeLocation(loc); err != nil {
			return window{}, 0, 0, err
		}
	}
	for _, side := range []string{a, b} { // both hosts, in both directions
		warm, _, err := startServed(ctx, c, filepath.Join(side, "warm"), warmup)
		if err == nil {
			err = warm.drive(ctx, c)
		}
		if err != nil {
			return window{}, 0, 0, fmt.Errorf("warm-up: %w", err)
		}
	}
	scripts, ids := make([]served, runs), make([]string, runs)
	for i, loc := range locs {
		if scripts[i], ids[i], err = startServed(ctx, c, loc, n); err != nil {
			return window{}, 0, 0, err
		}
	}
	f0, x0 := count.forwarded.Load(), count.noExecutor.Load()
	if w, err = driveAll(ctx, c, scripts, runs*n); err != nil {
		return window{}, 0, 0, err
	}
	forwarded, noExecutor = count.forwarded.Load()-f0, count.noExecutor.Load()-x0
	holder := func(i int) string { return specs[i%len(specs)].name }
	return w, forwarded, noExecutor, committedByHolders(ctx, hosts[0].host, ids, n, holder)
}

// committedByHolders checks, on h's projection once it has caught up, that
// every step of each run ids[i] was committed by holder(i).
func committedByHolders(ctx context.Context, h *commands.Host, ids []string, n int, holder func(int) string) error {
	if err := h.Proj.Sync(ctx, h.Log); err != nil {
		return err
	}
	for i, id := range ids {
		r, ok, err := h.Proj.Run(id)
		if err != nil || !ok {
			return fmt.Errorf("run %s: %w (found %t)", id, err, ok)
		}
		for k := 1; k <= n; k++ {
			if s := r.Step(k); s == nil || s.Host != holder(i) {
				return fmt.Errorf("run %s, step %d: not committed by its holder %s: %+v", id, k, holder(i), s)
			}
		}
	}
	return nil
}
