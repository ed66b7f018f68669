package bench

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step"
)

// baselineAPI is the engine as w8's in-situ baseline sees it: the agent
// loop's requests with its bookkeeping replaced by the baseline's, a turn's
// commit published raw and each step submitted straight to the host. The
// run starts without model settings (a plain run, whose steps need no
// turn recorded), the catalogue is the first one materialized, and each
// turn is one raw turn-sized commit on a stream of its own.
type baselineAPI struct {
	client.API
	pub  *step.Publisher
	msgs []*nats.Msg
	next int
	last uint64
	cat  *client.Catalog
}

// StartRun starts a plain run: its steps need no turn recorded.
func (b *baselineAPI) StartRun(ctx context.Context, req client.StartRunRequest) (*client.RunInfo, error) {
	req.Model = nil
	return b.API.StartRun(ctx, req)
}

// Materialize answers with the first catalogue it was given.
func (b *baselineAPI) Materialize(ctx context.Context, req client.MaterializeRequest) (*client.Catalog, error) {
	if b.cat != nil {
		return b.cat, nil
	}
	c, err := b.API.Materialize(ctx, req)
	b.cat = c
	return c, err
}

// RecordTurn publishes the next raw turn-sized commit and waits for its
// acknowledgement.
func (b *baselineAPI) RecordTurn(ctx context.Context, req client.RecordTurnRequest) (*client.TurnRecord, error) {
	if b.next == len(b.msgs) {
		return nil, fmt.Errorf("w8 baseline: more turns than the %d commits made", len(b.msgs))
	}
	last, err := publishChain(ctx, b.pub, b.msgs[b.next:b.next+1], b.last)
	if err != nil {
		return nil, err
	}
	b.next, b.last = b.next+1, last
	return &client.TurnRecord{Run: req.Run, Turn: req.Turn.Turn}, nil
}

// newBaselineAPI is w8's baseline made as a model-driven run makes its
// steps: the agent loop through it (w8Paired) makes the same turns against
// the same fake as the agent's, each turn's commit published raw on a
// stream of its own and its step submitted straight to h, so that its
// loopMS is a turn's step and raw commit, each after a model request as
// the agent's are. close ends its stream's server.
func newBaselineAPI(ctx context.Context, o Options, h *commands.Host, tasks int) (client.API, func(), error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := turnMessages(warmup + tasks*(w8Turns+1))
	if err != nil {
		e.close()
		return nil, nil, err
	}
	last, err := publishChain(ctx, e.pub, msgs[:warmup], 0)
	if err != nil {
		e.close()
		return nil, nil, err
	}
	return &baselineAPI{API: commands.Wire{Host: h}, pub: e.pub, msgs: msgs[warmup:], last: last}, e.close, nil
}

// SubmitStep publishes the step's turn raw and waits for its
// acknowledgement, as RecordTurn does, then submits the step without it:
// the turn's commit and the step one after the other, the engine's
// overlap of the two left out.
func (b *baselineAPI) SubmitStep(ctx context.Context, req client.SubmitStepRequest) (*client.StepOutcome, error) {
	if req.Turn != nil {
		if _, err := b.RecordTurn(ctx, client.RecordTurnRequest{Run: req.Run, Turn: *req.Turn}); err != nil {
			return nil, err
		}
		req.Turn = nil
	}
	return b.API.SubmitStep(ctx, req)
}
