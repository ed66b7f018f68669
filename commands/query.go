package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/projection"
)

// Runs lists the runs this host's projection knows, oldest first.
func (e *Engine) Runs(ctx context.Context) ([]RunSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.syncAll(ctx); err != nil {
		return nil, err
	}
	return e.proj.Runs()
}

// Show returns one run in full: every step, every call with its verdict, the
// rule that decided, and its result.
func (e *Engine) Show(ctx context.Context, req ShowRequest) (*projection.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.syncReads(ctx, req.Run); err != nil {
		return nil, err
	}
	var (
		out *projection.Run
		err error
	)
	if verr := e.viewWhole(req.Run, func(r *projection.Run) { out, err = r.Clone() }); verr != nil {
		return nil, verr
	}
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", req.Run, err)
	}
	return out, nil
}

func (e *Engine) summary(run string) (*RunSummary, error) {
	var s RunSummary
	if err := e.viewRun(run, func(r *projection.Run) { s = r.Summary() }); err != nil {
		return nil, err
	}
	return &s, nil
}
