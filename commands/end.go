package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// EndRun ends a run with a cause (default completed). Ended absorbs: a second
// EndRun, like any later command on the run, gets [ErrRunNotActive].
func (e *Engine) EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	if req.Cause == "" {
		req.Cause = events.CauseCompleted
	}
	switch req.Cause {
	case events.CauseCompleted, events.CauseDeclined, events.CauseCancelled, events.CauseFailed:
	default:
		return nil, fmt.Errorf("end run %s: cause %q: want completed, declined, cancelled or failed: %w", req.Run, req.Cause, ErrInvalidRequest)
	}
	e.known(ctx, req.Run)
	return raced(ctx, e, req.Run, func() (*RunSummary, error) { return e.endRun(ctx, req) })
}

// endRun is EndRun against the run as this host holds it.
func (e *Engine) endRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	held := e.lockRun(req.Run)
	defer held.unlock()
	r, err := e.header(req.Run)
	if err != nil {
		return nil, err
	}
	last := r.LastSeq
	if r.Status == projection.StatusEnded {
		return nil, fmt.Errorf("end run %s: %w", req.Run, ErrRunNotActive)
	}
	c := e.newCommit(req.Run, 0, events.KindEnd, events.RunEnded{Cause: req.Cause, Reason: req.Reason})
	if _, err := e.commit(ctx, c, last); err != nil {
		return nil, fmt.Errorf("end run %s: %w", req.Run, err)
	}
	e.forget(req.Run)
	return e.summary(req.Run)
}
