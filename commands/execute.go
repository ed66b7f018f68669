package commands

import (
	"context"
	"sync"
	"time"

	"github.com/stepgate/stepgate/executor"
)

// execute runs the allowed calls, concurrently when there are several
// (calls on one file one after the other, in model order: see runAll);
// each result lands in its own call, so model order is kept whatever order
// they finish in. A call starts only under the lease epoch the plan was decided
// with (see runIn).
func (p *plan) execute(ctx context.Context, e *submitter) {
	var allowed []*planned
	for _, c := range p.calls {
		if c.runs() {
			allowed = append(allowed, c)
		}
	}
	e.runAll(ctx, p.epoch, p.place, allowed, p.limits)
}

// runsAny reports whether any call of the plan runs.
func (p *plan) runsAny() bool {
	for _, c := range p.calls {
		if c.runs() {
			return true
		}
	}
	return false
}

// NotPlacedResult begins the result of a call that did not start because
// the run's location, as this host sees it, is no longer the place the run
// pinned (the directory was moved away, replaced, or its marker changed):
// the effect is not made on another directory.
const NotPlacedResult = "The call did not run: its location is not the run's any more: "

// LeaseLostResult is the result of a call that did not start because this
// host's lease lapsed, or was taken over, after the call was decided.
const LeaseLostResult = "The call did not run: this host lost its lease before the call started"

// run executes the call and records its result, bounded at store.
func (c *planned) run(ctx context.Context, store *executor.OutputStore, lim executor.Limits) {
	whole := c.prepared.Run(ctx)
	res, sp := store.Bound(whole, lim)
	res.Acted = whole.Acted // not the model's: bounding leaves it out
	c.setResult(res)
	c.result.Sandbox = sandboxRecord(whole.Sandbox, nil)
	c.refused, c.failed = whole.Refused, whole.Failed || whole.IsError
	c.state = whole.State
	if sp != nil {
		c.spilled = sp
		c.result.Files = []string{sp.Path}
	}
}

// runAll executes prepared calls (in model order), concurrently when there
// are several — but calls that touch the same file one after the other, in
// model order (see chains) — each in one of the host's execution slots
// (see Config.MaxExecutions), and bounds each result to lim at the output
// store (fit bounds them further to their commit's budget, at the store
// too, before the commit is built). epoch is the host's lease epoch when
// the calls were decided (leaseEpoch).
func (h *submitter) runAll(ctx context.Context, epoch uint64, at placeAt, allowed []*planned, lim executor.Limits) {
	if len(allowed) == 1 {
		h.runIn(ctx, epoch, at, allowed[0], lim)
		return
	}
	var wg sync.WaitGroup
	chained := chains(allowed)
	if chained == nil {
		for _, c := range allowed {
			wg.Go(func() { h.runIn(ctx, epoch, at, c, lim) })
		}
	}
	for _, chain := range chained {
		wg.Go(func() { h.runChain(ctx, epoch, at, chain, lim) })
	}
	wg.Wait()
}

// runIn runs c once an execution slot is free; a call whose ctx ends while
// it queues does not run, and says so. Starting the call is the point of no
// return for its effects: it starts only while this host's lease is valid
// and is still the one of epoch (a host that was paused past its lease, or
// whose lease was taken over meanwhile, starts nothing it decided before; a
// host whose renewals failed for a while, NATS unavailable, waits until it
// renews the same lease).
func (h *submitter) runIn(ctx context.Context, epoch uint64, at placeAt, c *planned, lim executor.Limits) {
	select {
	case h.execs <- struct{}{}:
	case <-ctx.Done():
		c.setResult(executor.ErrorResult("The call did not run: " + context.Cause(ctx).Error()))
		return
	}
	defer func() { <-h.execs }()
	if !h.leaseFor(ctx, epoch) {
		c.setResult(executor.ErrorResult(LeaseLostResult))
		return
	}
	if err := h.checkPlace(at, c); err != nil {
		c.setResult(executor.ErrorResult(NotPlacedResult + err.Error()))
		return
	}
	defer h.toolDone(c.req.Tool, time.Now())
	if c.escalated != "" {
		c.runEscalated(ctx, h.store, lim)
		return
	}
	if at.contain == nil {
		c.run(ctx, h.store, lim)
		return
	}
	h.runContained(ctx, c, at, lim)
}
