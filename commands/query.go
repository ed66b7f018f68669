package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
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
	if !events.ValidID(req.Run) {
		return nil, fmt.Errorf("run %q: %w", req.Run, ErrRunNotFound)
	}
	out, ok, err := h.proj.Run(req.Run) // a deep copy: the caller's own
	if err := found(req.Run, ok, err); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *runs) summary(run string) (*RunSummary, error) {
	r, err := h.header(run)
	if err != nil {
		return nil, err
	}
	s := r.Summary()
	return &s, nil
}
