package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// SweepResult says what an output sweep deleted (the wire contract's).
type SweepResult = client.SweepResult

// SweepOutputs answers [Engine.SweepOutputs].
func (h *outputs) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	dir := h.store.Dir()
	res := &SweepResult{Dir: dir}
	files, err := h.store.Files()
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	known := h.proj.Outputs()
	now := h.cfg.Clock()
	for _, f := range files {
		expires := now // unknown until looked at
		if o, ok := known[f.Path]; ok {
			expires = o.Expires
		} else if !f.Modified.IsZero() {
			expires = f.Modified.Add(executor.OutputRetention)
		} else {
			continue
		}
		if now.Before(expires) {
			continue
		}
		if err := h.store.Remove(f.Path); err != nil {
			h.cfg.Logger.Warn("sweeping an output file", "path", f.Path, "err", err)
			continue
		}
		res.Deleted = append(res.Deleted, f.Path)
	}
	// Files the log keeps that are gone from the directory are swept too,
	// so the projection matches the directory.
	for path := range known {
		if !slices.Contains(res.Deleted, path) && h.store.Gone(path) {
			res.Deleted = append(res.Deleted, path)
		}
	}
	if len(res.Deleted) == 0 {
		return res, nil
	}
	slices.Sort(res.Deleted)
	if err := h.commitSubject(ctx, events.OutputSubject, events.KindSweep,
		[]events.Event{events.OutputFileSwept{Paths: res.Deleted}}); err != nil {
		return nil, fmt.Errorf("record the output sweep: %w", err)
	}
	return res, nil
}
