package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
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
	if !events.ValidID(req.Run) {
		return nil, fmt.Errorf("run %q: %w", req.Run, ErrRunNotFound)
	}
	out, ok, err := e.proj.Run(req.Run) // a deep copy: the caller's own
	if err := found(req.Run, ok, err); err != nil {
		return nil, err
	}
	return out, nil
}

func (e *Engine) summary(run string) (*RunSummary, error) {
	r, err := e.header(run)
	if err != nil {
		return nil, err
	}
	s := r.Summary()
	return &s, nil
}
