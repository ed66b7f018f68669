package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// rawMessages builds n commits shaped as W1's: one echo call per step,
// decided and settled in one commit, on one run subject.
func rawMessages(n int) ([]*nats.Msg, error) {
	ids := events.NewIDSource(nil)
	now := time.Now().UTC()
	run := ids.New(now)
	sum := sha256.Sum256([]byte("echo"))
	identity := hex.EncodeToString(sum[:])
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		m, err := commitMsg(echoStep(ids, now, run, "", identity, i+1))
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	return msgs, nil
}

// echoStep is step n of run as the engine commits one echo call (of the
// tool with identity) that the built-in default rule allows: requested,
// decided, settled and finalized in one commit, which names prev as the
// run's previous commit ("" for none).
func echoStep(ids *events.IDSource, now time.Time, run, prev, identity string, n int) *events.Commit {
	text := echoText()
	args, _ := json.Marshal(map[string]string{"text": text})
	rule := &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"}
	return &events.Commit{ID: ids.New(now), Run: run, Step: n, Kind: events.KindStep, At: now, Host: "bench", Prev: prev,
		Events: []events.Event{
			events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: args, Identity: identity},
			events.PermissionDecided{CallID: "c1", Verdict: events.VerdictAllow, Reason: `allowed by rule * "*" (built-in default)`,
				Rule: rule, Requests: []events.Request{{Action: "echo", Resources: []string{text}, Save: []string{"*"}}}},
			events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: text}}},
			events.StepFinalized{Calls: 1},
		}}
}

// commitMsg is c as the log publishes it: encoded, on its run's subject,
// de-duplicated by its id (the expectation header is the publisher's).
func commitMsg(c *events.Commit) (*nats.Msg, error) {
	data, err := events.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &nats.Msg{Subject: events.RunSubject(c.Run), Data: data,
		Header: nats.Header{jetstream.MsgIDHeader: []string{c.ID}}}, nil
}

// newRawEnv is a fresh embedded server with the log's stream set up and no
// engine.
func newRawEnv(ctx context.Context, o Options) (*env, error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	if _, err := step.Open(ctx, e.js, step.StreamConfig{}); err != nil {
		e.close()
		return nil, err
	}
	if e.pub, err = step.NewPublisher(e.nc); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// publishChain publishes msgs one at a time through the engine's publisher,
// each expecting the one before on their subject (the first expects last),
// and returns the last sequence.
func publishChain(ctx context.Context, pub *step.Publisher, msgs []*nats.Msg, last uint64) (uint64, error) {
	for _, m := range msgs {
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
		ack, err := pub.Publish(ctx, m)
		if err != nil {
			return 0, fmt.Errorf("raw publish: %w", err)
		}
		last = ack.Sequence
	}
	return last, nil
}

// warmup is how many steps (or raw messages) run before the clock starts, in
// every workload alike: the first writes to a fresh stream pay for creating
// its files.
const warmup = 100

// rawRates publishes W1-shaped commits straight to JetStream on a fresh
// stream, with optimistic concurrency and de-duplication headers: after the
// same warm-up as the engine's workloads, syncN one at a time, then asyncN
// with up to 256 in flight. It returns the two windows (a phase of 0
// messages is skipped).
func rawRates(ctx context.Context, o Options, syncN, asyncN int) (syncW, asyncW window, err error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return window{}, window{}, err
	}
	defer e.close()
	msgs, err := rawMessages(warmup + syncN)
	if err != nil {
		return window{}, window{}, err
	}
	last, err := publishChain(ctx, e.pub, msgs[:warmup], 0)
	if err != nil {
		return window{}, window{}, err
	}
	if syncN > 0 {
		syncW, err = timed(syncN, func() (err error) {
			last, err = publishChain(ctx, e.pub, msgs[warmup:], last)
			return err
		})
		if err != nil {
			return window{}, window{}, err
		}
	}
	if asyncN > 0 {
		asyncW, err = rawAsync(ctx, e.nc, asyncN, last)
	}
	return syncW, asyncW, err
}

// rawAsync publishes n commits of a new run with up to 256 in flight, on a
// stream whose last sequence is last: nothing else writes to it, so every
// expectation is known in advance.
func rawAsync(ctx context.Context, nc *nats.Conn, n int, last uint64) (window, error) {
	msgs, err := rawMessages(n)
	if err != nil {
		return window{}, err
	}
	return rawAsyncMsgs(ctx, nc, msgs, func(i int) uint64 {
		if i == 0 {
			return 0
		}
		return last + uint64(i)
	})
}

// rawAsyncMsgs publishes msgs with up to 256 in flight, message i
// expecting expect(i) as its subject's last sequence, and fails when any
// publish was refused.
func rawAsyncMsgs(ctx context.Context, nc *nats.Conn, msgs []*nats.Msg, expect func(i int) uint64) (window, error) {
	var refused atomic.Int64
	var first atomic.Value
	ajs, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			if refused.Add(1) == 1 {
				first.Store(err)
			}
		}))
	if err != nil {
		return window{}, err
	}
	w, err := timed(len(msgs), func() error {
		for i, m := range msgs {
			m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect(i), 10))
			_, err := ajs.PublishMsgAsync(m)
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				err = republishStalled(ajs, m)
			}
			if err != nil {
				return fmt.Errorf("raw async publish: %w", err)
			}
		}
		select {
		case <-ajs.PublishAsyncComplete():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		return window{}, err
	}
	if got := ajs.PublishAsyncPending(); got != 0 {
		return window{}, fmt.Errorf("raw async: %d publishes unacknowledged", got)
	}
	if n := refused.Load(); n > 0 {
		return window{}, fmt.Errorf("raw async: %d of %d publishes refused, the first: %v", n, len(msgs), first.Load())
	}
	return w, nil
}

// republishStalled publishes m again after its publish stalled (256
// unacknowledged for the client's 200 ms: a busy machine, a race build):
// a stalled publish sent nothing. It keeps trying for step.AckWait, the
// engine's own wait for an acknowledgement.
func republishStalled(ajs jetstream.JetStream, m *nats.Msg) error {
	giveUp := time.Now().Add(step.AckWait)
	for {
		_, err := ajs.PublishMsgAsync(m)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || time.Now().After(giveUp) {
			return err
		}
	}
}

// rawConcurrent publishes W1-shaped commits from runs concurrent
// synchronous publishers, one run subject each (after a warm-up), and
// returns their window.
func rawConcurrent(ctx context.Context, o Options, runs, perRun int) (window, error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return window{}, err
	}
	defer e.close()
	warm, err := rawMessages(warmup)
	if err != nil {
		return window{}, err
	}
	if _, err := publishChain(ctx, e.pub, warm, 0); err != nil {
		return window{}, err
	}
	batches := make([][]*nats.Msg, runs)
	for i := range batches {
		if batches[i], err = rawMessages(perRun); err != nil {
			return window{}, err
		}
	}
	return rawPipelineMsgs(ctx, e.pub, batches)
}

// rawPipelineMsgs publishes each batch from its own synchronous publisher,
// all at once, and returns their window.
func rawPipelineMsgs(ctx context.Context, pub *step.Publisher, batches [][]*nats.Msg) (window, error) {
	runs, n := len(batches), 0
	for _, b := range batches {
		n += len(b)
	}
	publish := func(msgs []*nats.Msg) error {
		_, err := publishChain(ctx, pub, msgs, 0)
		return err
	}
	return timed(n, func() error {
		errs := make([]error, runs)
		var wg sync.WaitGroup
		for i, b := range batches {
			wg.Go(func() { errs[i] = publish(b) })
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

func runRaw(ctx context.Context, o Options) (Result, error) {
	n := o.sizes().rawMsgs
	s, a, err := rawRates(ctx, o, n, n)
	if err != nil {
		return nil, err
	}
	r := newResult(o)
	r["sync_msgs_per_s"], r["async_msgs_per_s"] = s.rate(), a.rate()
	r["sync_cpu_us_per_msg"], r["async_cpu_us_per_msg"] = s.cpuPer(), a.cpuPer()
	return r, nil
}
