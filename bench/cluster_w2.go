package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// clusterReplicas is the stream's replica count on the cluster.
const clusterReplicas = 3

// runC2 is w2 against a three-node cluster with an R3 stream: rounds
// alternate the raw R3 baselines (asynchronous, and one synchronous
// publisher per run) and the engine, each round with new runs. Every
// client connects to the first node; the streams' leaders are wherever the
// cluster puts them.
//
// The streams and the engine host live as long as the cluster. Deleting
// and making R3 streams round after round made the cluster slower with
// every round (a third in eight rounds) and now and then refused a new
// stream (no suitable peers, peer offline) or its first expectation; and a
// fresh host on the grown stream first replays every round before it, and
// checkpoints all of it, in the window.
func runC2(ctx context.Context, o Options) (res Result, err error) {
	sz := o.sizes()
	c, err := startCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	raw, err := openRawR3(ctx, c)
	if err != nil {
		return nil, err
	}
	defer raw.nc.Close()
	h, stop, err := clusterHost(ctx, o, c)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	total := sz.w2Runs * sz.w2Steps
	var asyncs, pipes, steps []window
	for range sz.clusterRounds {
		async, pipe, err := raw.rates(ctx, total, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		w, err := w2Drive(ctx, h, sz.w2Runs, sz.w2Steps)
		if err != nil {
			return nil, err
		}
		asyncs, pipes, steps = append(asyncs, async), append(pipes, pipe), append(steps, w)
	}
	r := w2Result(o, asyncs, pipes, steps)
	// w2's baseline key, here on the cluster: raw_async_msgs_per_s is the
	// same figure as raw_r3_async_msgs_per_s, so that ratio reads as w2's.
	r["raw_r3_async_msgs_per_s"] = r["raw_async_msgs_per_s"]
	r["nodes"], r["replicas"] = clusterNodes, clusterReplicas
	r["rounds"] = sz.clusterRounds
	return r, nil
}

// rawR3 is the raw baselines' stream on the cluster: the log's stream
// configuration (R3) under another name, on subjects raw.sg.>, so that it
// lives beside the log's without the engine seeing its messages.
type rawR3 struct {
	nc  *nats.Conn
	pub *step.Publisher
}

func openRawR3(ctx context.Context, c *cluster) (*rawR3, error) {
	nc, js, err := c.connect(0)
	if err != nil {
		return nil, err
	}
	if _, err := step.Open(ctx, js, step.StreamConfig{Replicas: clusterReplicas}); err != nil {
		nc.Close()
		return nil, err
	}
	logStream, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		nc.Close()
		return nil, err
	}
	cfg := logStream.CachedInfo().Config
	cfg.Name, cfg.Subjects = "RAW", []string{rawPrefix + events.AllSubjects}
	r := &rawR3{nc: nc}
	if err := createRetrying(ctx, js, cfg); err != nil {
		nc.Close()
		return nil, fmt.Errorf("raw stream: %w", err)
	}
	if r.pub, err = step.NewPublisher(nc); err != nil {
		nc.Close()
		return nil, err
	}
	return r, nil
}

const rawPrefix = "raw."

// messages is rawMessages on the raw stream's subjects.
func (r *rawR3) messages(n int) ([]*nats.Msg, error) {
	msgs, err := rawMessages(n)
	for _, m := range msgs {
		m.Subject = rawPrefix + m.Subject
	}
	return msgs, err
}

// rates measures, after the warm-up, asyncN W1-shaped commits with up to
// 256 in flight, then runs synchronous publishers of perRun commits each,
// one new run subject each.
//
// The asynchronous commits are each on a subject of their own (expecting
// it empty): a clustered stream refuses a message that expects its
// subject's last sequence while another message of that subject is in
// process (10164, wrong last sequence, as ADR-50 specifies), so the single
// node's baseline (one run, 256 in flight) is refused on R3 but for the
// first message in flight. One message in flight per subject is also all a
// run has in the engine.
func (r *rawR3) rates(ctx context.Context, asyncN, runs, perRun int) (async, pipe window, err error) {
	warm, err := r.messages(warmup)
	if err != nil {
		return window{}, window{}, err
	}
	if _, err := publishChain(ctx, r.pub, warm, 0); err != nil {
		return window{}, window{}, err
	}
	msgs, err := r.messages(asyncN)
	if err != nil {
		return window{}, window{}, err
	}
	for i, m := range msgs {
		m.Subject += "." + strconv.Itoa(i)
	}
	if async, err = rawAsyncMsgs(ctx, r.nc, msgs, func(int) uint64 { return 0 }); err != nil {
		return window{}, window{}, err
	}
	batches := make([][]*nats.Msg, runs)
	for i := range batches {
		if batches[i], err = r.messages(perRun); err != nil {
			return window{}, window{}, err
		}
	}
	pipe, err = rawPipelineMsgs(ctx, r.pub, batches)
	return async, pipe, err
}

// clusterHost starts an engine host connected to the cluster's first
// node, on a fresh state directory, and warms it up; stop closes it.
func clusterHost(ctx context.Context, o Options, c *cluster) (h *commands.Host, stop func() error, err error) {
	nc, js, err := c.connect(0)
	if err != nil {
		return nil, nil, err
	}
	state, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	cleanup := func() { nc.Close(); os.RemoveAll(state) }
	if h, err = startBenchHost(ctx, js, filepath.Join(state, "state"), clusterReplicas); err != nil {
		cleanup()
		return nil, nil, err
	}
	stop = func() error { err := h.Close(); cleanup(); return err }
	if err := warmUp(ctx, h, "echo"); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	return h, stop, nil
}

// createRetrying creates the stream cfg, asking again when one request
// gets no answer within 15 s: a cluster busy electing its meta leader (seen
// under -race with the other test packages) can drop a request, and one
// lost request must not cost the whole workload's deadline. Creating the
// same configuration again is idempotent.
func createRetrying(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := js.CreateOrUpdateStream(actx, cfg)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
}
