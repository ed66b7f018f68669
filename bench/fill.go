package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/events"
)

// rebuildRunSteps is the length of the runs w5's stream holds: w2's.
const rebuildRunSteps = 100

// fillBatch is about how many commits w5's fill publishes before it waits
// for their acknowledgements (whole runs: a run's commits expect each
// other's sequences, known only within one batch).
const fillBatch = 4096

// filled is what a fill wrote to the stream: what a rebuild must fold.
type filled struct {
	events, commits, runs, steps int
	// last is the stream's last sequence after the fill.
	last uint64
}

// runTemplate is what every run of the fill copies from a run the engine
// made: its start commit (the pinned rules, policy and catalogue) and the
// echo tool's identity in that catalogue.
type runTemplate struct {
	start    *events.Commit
	identity string
}

// fillStream fills e's stream with runs of echo steps until it holds at
// least target events (the events inside the commits, not the commits).
// The first run is the engine's own: a host starts it and drives its
// warm-up steps, one echo call each, as w1 does. Every other run is a copy
// of its start commit followed by rebuildRunSteps steps shaped as the
// engine commits them (echoStep), each naming the one before, published
// with the engine's optimistic-concurrency and de-duplication headers, up
// to 256 in flight (rawAsyncMsgs). The host is closed before those: no
// projector folds the fill, and the rebuild is the stream's first.
func fillStream(ctx context.Context, e *env, target int) (filled, error) {
	var f filled
	t, err := engineRun(ctx, e, &f)
	if err != nil {
		return f, err
	}
	ids := events.NewIDSource(nil)
	for f.events < target {
		now := time.Now().UTC()
		var (
			msgs   []*nats.Msg
			expect []uint64
		)
		for len(msgs) < fillBatch && f.events < target {
			run := t.run(ids, now, target-f.events)
			for i, c := range run {
				m, err := commitMsg(c)
				if err != nil {
					return f, err
				}
				want := uint64(0) // a run's first commit expects an empty subject
				if i > 0 {
					want = f.last + uint64(len(msgs)) // the message before, this run's
				}
				msgs, expect = append(msgs, m), append(expect, want)
				f.events += len(c.Events)
			}
			f.runs, f.steps = f.runs+1, f.steps+len(run)-1
		}
		if _, err := rawAsyncMsgs(ctx, e.nc, msgs, func(i int) uint64 { return expect[i] }); err != nil {
			return f, fmt.Errorf("fill: %w", err)
		}
		f.commits += len(msgs)
		f.last += uint64(len(msgs))
	}
	return f, nil
}

// engineRun starts a host on e, drives one run of warm-up echo steps
// through it, counts that run into f and returns its template. The host
// is closed on return.
func engineRun(ctx context.Context, e *env, f *filled) (t runTemplate, err error) {
	h, err := e.host(ctx)
	if err != nil {
		return t, err
	}
	defer func() { err = errors.Join(err, h.Close()) }()
	sc, err := newScript(ctx, h, "echo", warmup)
	if err != nil {
		return t, err
	}
	if _, err := sc.drive(ctx, h); err != nil {
		return t, err
	}
	stored, err := h.Log.ReadRun(ctx, sc[0].Run, 0)
	if err != nil {
		return t, err
	}
	if f.last, err = h.Log.LastSeq(ctx); err != nil {
		return t, err
	}
	if len(stored) == 0 || stored[0].Commit == nil || stored[0].Commit.Kind != events.KindStart {
		return t, fmt.Errorf("fill: run %s does not begin with its start commit", sc[0].Run)
	}
	if f.last != uint64(len(stored)) {
		return t, fmt.Errorf("fill: the stream holds %d messages, the engine's run %d", f.last, len(stored))
	}
	for _, s := range stored {
		if s.Commit == nil {
			return t, fmt.Errorf("fill: stream sequence %d is no commit", s.Seq)
		}
		f.events += len(s.Commit.Events)
	}
	f.commits, f.runs, f.steps = len(stored), 1, len(sc)
	t.start = stored[0].Commit
	for _, ev := range t.start.Events {
		if cat, ok := ev.(events.CatalogAdvertised); ok {
			for _, tool := range cat.Tools {
				if tool.Name == "echo" {
					t.identity = tool.Identity
				}
			}
		}
	}
	if t.identity == "" {
		return t, fmt.Errorf("fill: run %s advertised no echo tool", sc[0].Run)
	}
	return t, nil
}

// run makes the commits of a new run: its start commit and rebuildRunSteps
// echo steps, fewer when fewer events are left to make.
func (t runTemplate) run(ids *events.IDSource, now time.Time, left int) []*events.Commit {
	start := *t.start // the events are shared: only the envelope differs
	start.ID, start.Run, start.At = ids.New(now), ids.New(now), now
	cs := []*events.Commit{&start}
	left -= len(start.Events)
	for n := 1; n <= rebuildRunSteps && left > 0; n++ {
		c := echoStep(ids, now, start.Run, cs[len(cs)-1].ID, t.identity, n)
		cs = append(cs, c)
		left -= len(c.Events)
	}
	return cs
}
