package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/step"
)

// clusterReplicas is the stream's replica count on the cluster.
const clusterReplicas = 3

// runC2 is w2 against a three-node cluster with an R3 stream: rounds
// alternate the raw R3 baselines (asynchronous, and one synchronous
// publisher per run) and the engine, on one cluster, each on a fresh
// stream. Every client connects to the first node; the stream's leader is
// wherever the cluster puts it, for the baselines and the engine alike.
func runC2(ctx context.Context, o Options) (Result, error) {
	sz := o.sizes()
	c, err := startCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	total := sz.w2Runs * sz.w2Steps
	var asyncs, pipes, steps []window
	for range sz.clusterRounds {
		async, pipe, err := rawR3(ctx, c, total, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		w, err := c2Round(ctx, o, c, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		asyncs, pipes, steps = append(asyncs, async), append(pipes, pipe), append(steps, w)
	}
	r := newResult(o)
	rate := medianOf(steps, window.rate)
	rawAsync, rawPipelines := medianOf(asyncs, window.rate), medianOf(pipes, window.rate)
	r["steps_per_s"] = rate
	// w2's baseline key, here on the cluster: the same figure as
	// raw_r3_async_msgs_per_s, so that ratio reads as w2's does.
	r["raw_async_msgs_per_s"] = rawAsync
	r["raw_r3_async_msgs_per_s"] = rawAsync
	r["ratio"] = ratio(rate, rawAsync)
	r["raw_pipelines_msgs_per_s"] = rawPipelines
	r["ratio_to_pipelines"] = ratio(rate, rawPipelines)
	r["cpu_us_per_step"] = medianOf(steps, window.cpuPer)
	r["raw_async_cpu_us_per_msg"] = medianOf(asyncs, window.cpuPer)
	r["raw_pipelines_cpu_us_per_msg"] = medianOf(pipes, window.cpuPer)
	r["nodes"], r["replicas"] = clusterNodes, clusterReplicas
	r["rounds"] = sz.clusterRounds
	return r, nil
}

// rawR3 measures the raw baselines on a fresh R3 stream of the cluster:
// after the warm-up, asyncN W1-shaped commits of one run with up to 256 in
// flight, then runs synchronous publishers of perRun commits each, one run
// subject each. The stream is deleted after.
func rawR3(ctx context.Context, c *cluster, asyncN, runs, perRun int) (async, pipe window, err error) {
	nc, js, err := c.connect(0)
	if err != nil {
		return window{}, window{}, err
	}
	defer nc.Close()
	if _, err := step.Open(ctx, js, step.StreamConfig{Replicas: clusterReplicas}); err != nil {
		return window{}, window{}, err
	}
	defer func() { err = errors.Join(err, deleteStream(context.WithoutCancel(ctx), js)) }()
	pub, err := step.NewPublisher(nc)
	if err != nil {
		return window{}, window{}, err
	}
	warm, err := rawMessages(warmup)
	if err != nil {
		return window{}, window{}, err
	}
	last, err := publishChain(ctx, pub, warm, 0)
	if err != nil {
		return window{}, window{}, err
	}
	if async, err = rawAsync(ctx, nc, asyncN, last); err != nil {
		return window{}, window{}, err
	}
	pipe, err = rawPipelines(ctx, pub, runs, perRun)
	return async, pipe, err
}

// c2Round measures w2 on an engine host connected to the cluster's first
// node, on a fresh R3 stream (deleted after) and a fresh state directory.
func c2Round(ctx context.Context, o Options, c *cluster, runs, n int) (w window, err error) {
	nc, js, err := c.connect(0)
	if err != nil {
		return window{}, err
	}
	defer nc.Close()
	state, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		return window{}, err
	}
	defer os.RemoveAll(state)
	h, err := startBenchHost(ctx, js, filepath.Join(state, "state"), clusterReplicas)
	if err != nil {
		return window{}, err
	}
	defer func() {
		err = errors.Join(err, h.Close(), deleteStream(context.WithoutCancel(ctx), js))
	}()
	if err := warmUp(ctx, h, "echo"); err != nil {
		return window{}, err
	}
	return w2Drive(ctx, h, runs, n)
}
