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
	rule := &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"}
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		text := echoText()
		args, _ := json.Marshal(map[string]string{"text": text})
		c := &events.Commit{ID: ids.New(now), Run: run, Step: i + 1, Kind: events.KindStep, At: now, Host: "bench",
			Events: []events.Event{
				events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: args, Identity: identity},
				events.PermissionDecided{CallID: "c1", Verdict: events.VerdictAllow, Reason: `allowed by rule * "*" (built-in default)`,
					Rule: rule, Requests: []events.Request{{Action: "echo", Resources: []string{text}, Save: []string{"*"}}}},
				events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: text}}},
				events.StepFinalized{Calls: 1},
			}}
		data, err := events.Marshal(c)
		if err != nil {
			return nil, err
		}
		msgs[i] = &nats.Msg{Subject: events.RunSubject(run), Data: data,
			Header: nats.Header{jetstream.MsgIDHeader: []string{c.ID}}}
	}
	return msgs, nil
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
	return e, nil
}

// publishChain publishes msgs one at a time through the engine's publish
// call, each expecting the one before on their subject (the first expects
// last), and returns the last sequence.
func publishChain(ctx context.Context, js jetstream.JetStream, msgs []*nats.Msg, last uint64) (uint64, error) {
	for _, m := range msgs {
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
		ack, err := step.Publish(ctx, js, m)
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
// stream, with optimistic concurrency and de-duplication headers, first one
// at a time (after the same warm-up as the engine's workloads), then with up
// to 256 in flight. It returns msgs/s of each.
func rawRates(ctx context.Context, o Options, n int) (syncRate, asyncRate float64, err error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return 0, 0, err
	}
	defer e.close()
	msgs, err := rawMessages(warmup + n)
	if err != nil {
		return 0, 0, err
	}
	last, err := publishChain(ctx, e.js, msgs[:warmup], 0)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if last, err = publishChain(ctx, e.js, msgs[warmup:], last); err != nil {
		return 0, 0, err
	}
	syncRate = perSecond(n, time.Since(start))

	// The same messages as a second run: new ids and subject, expectations
	// known in advance because nothing else writes to the stream.
	msgs, err = rawMessages(n)
	if err != nil {
		return 0, 0, err
	}
	ajs, err := jetstream.New(e.nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		return 0, 0, err
	}
	base := last
	start = time.Now()
	for i, m := range msgs {
		expect := uint64(0)
		if i > 0 {
			expect = base + uint64(i)
		}
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect, 10))
		if _, err := ajs.PublishMsgAsync(m); err != nil {
			return 0, 0, fmt.Errorf("raw async publish: %w", err)
		}
	}
	select {
	case <-ajs.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	asyncRate = perSecond(n, time.Since(start))
	if got := ajs.PublishAsyncPending(); got != 0 {
		return 0, 0, fmt.Errorf("raw async: %d publishes unacknowledged", got)
	}
	return syncRate, asyncRate, nil
}

// rawConcurrent publishes W1-shaped commits from runs concurrent
// synchronous publishers, one run subject each (after a warm-up), and
// returns the total msgs/s.
func rawConcurrent(ctx context.Context, o Options, runs, perRun int) (float64, error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return 0, err
	}
	defer e.close()
	publish := func(msgs []*nats.Msg) error {
		_, err := publishChain(ctx, e.js, msgs, 0)
		return err
	}
	warm, err := rawMessages(warmup)
	if err != nil {
		return 0, err
	}
	if err := publish(warm); err != nil {
		return 0, err
	}
	batches := make([][]*nats.Msg, runs)
	for i := range batches {
		if batches[i], err = rawMessages(perRun); err != nil {
			return 0, err
		}
	}
	errs := make([]error, runs)
	var wg sync.WaitGroup
	start := time.Now()
	for i, b := range batches {
		wg.Go(func() { errs[i] = publish(b) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return perSecond(runs*perRun, elapsed), nil
}

func runRaw(ctx context.Context, o Options) (Result, error) {
	s, a, err := rawRates(ctx, o, o.sizes().rawMsgs)
	if err != nil {
		return nil, err
	}
	r := newResult(o)
	r["sync_msgs_per_s"], r["async_msgs_per_s"] = s, a
	return r, nil
}
