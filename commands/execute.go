package commands

import (
	"context"
	"sync"
	"time"

	"github.com/stepgate/stepgate/executor"
)

// execute runs the allowed calls, concurrently when there are several; each
// result lands in its own call, so model order is kept whatever order they
// finish in.
func (p *plan) execute(ctx context.Context, e *Engine) {
	var allowed []*planned
	for _, c := range p.calls {
		if c.runs() {
			allowed = append(allowed, c)
		}
	}
	e.runAll(ctx, allowed, p.limits)
}

// runAll executes prepared calls, concurrently when there are several, each
// in one of the host's execution slots (see Config.MaxExecutions), and
// bounds each result at the output store — the one place output is cut.
func (e *Engine) runAll(ctx context.Context, allowed []*planned, lim executor.Limits) {
	if len(allowed) == 1 {
		e.runIn(ctx, allowed[0], lim)
		return
	}
	var wg sync.WaitGroup
	for _, c := range allowed {
		wg.Go(func() { e.runIn(ctx, c, lim) })
	}
	wg.Wait()
}

// runIn runs c once an execution slot is free; a call whose ctx ends while
// it queues does not run, and says so.
func (e *Engine) runIn(ctx context.Context, c *planned, lim executor.Limits) {
	select {
	case e.execs <- struct{}{}:
	case <-ctx.Done():
		c.setResult(executor.ErrorResult("The call did not run: " + context.Cause(ctx).Error()))
		return
	}
	defer func() { <-e.execs }()
	defer e.toolDone(c.req.Tool, time.Now())
	c.run(ctx, e.store, lim)
}

// run executes the call and records its result, bounded at store.
func (c *planned) run(ctx context.Context, store *executor.OutputStore, lim executor.Limits) {
	whole := c.prepared.Run(ctx)
	res, sp := store.Bound(whole, lim)
	c.setResult(res)
	c.state = whole.State
	if sp != nil {
		c.spilled = sp
		c.result.Files = []string{sp.Path}
	}
}
