package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// EndRun answers [Engine.EndRun].
func (h *runs) EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	if req.Cause == "" {
		req.Cause = events.CauseCompleted
	}
	switch req.Cause {
	case events.CauseCompleted, events.CauseDeclined, events.CauseCancelled, events.CauseFailed:
	default:
		return nil, fmt.Errorf("end run %s: cause %q: want completed, declined, cancelled or failed: %w", req.Run, req.Cause, ErrInvalidRequest)
	}
	h.known(ctx, req.Run)
	return raced(ctx, h.base, req.Run, func() (*RunSummary, error) { return h.endRun(ctx, req) })
}

// endRun is EndRun against the run as this host holds it.
func (h *runs) endRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	held := h.lockRun(req.Run)
	defer held.unlock()
	r, err := h.header(req.Run)
	if err != nil {
		return nil, err
	}
	from := at(&r)
	if r.Status == projection.StatusEnded {
		return nil, fmt.Errorf("end run %s: %w", req.Run, ErrRunNotActive)
	}
	c := h.newCommit(req.Run, 0, events.KindEnd, events.RunEnded{Cause: req.Cause, Reason: req.Reason})
	if _, err := h.commit(ctx, &c, from); err != nil {
		return nil, fmt.Errorf("end run %s: %w", req.Run, err)
	}
	h.forget(req.Run)
	return h.summary(req.Run)
}
