package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/projection"
)

// Runs answers [Engine.Runs].
func (h *runs) Runs(ctx context.Context) ([]RunSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := h.syncAll(ctx); err != nil {
		return nil, err
	}
	return h.proj.Runs()
}

// Show answers [Engine.Show].
func (h *runs) Show(ctx context.Context, req ShowRequest) (*projection.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := h.syncReads(ctx, req.Run); err != nil {
		return nil, err
	}
	var (
		out *projection.Run
		err error
	)
	if verr := h.viewWhole(req.Run, func(r *projection.Run) { out, err = r.Clone() }); verr != nil {
		return nil, verr
	}
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", req.Run, err)
	}
	return out, nil
}

func (h *runs) summary(run string) (*RunSummary, error) {
	var s RunSummary
	if err := h.viewRun(run, func(r *projection.Run) { s = r.Summary() }); err != nil {
		return nil, err
	}
	return &s, nil
}
