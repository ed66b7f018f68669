package commands

import (
	"context"
	"errors"
	"fmt"
	"github.com/stepgate/stepgate/client"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// SweepResult says what an output sweep deleted (the wire contract's).
type SweepResult = client.SweepResult

// SweepOutputs deletes this host's spilled output files whose retention has
// passed — by the expiry the log recorded for them, or for a file the log
// does not know, by its age — and records what it deleted in one
// OutputFileSwept commit. Files still within their retention are kept. Hosts
// run it at start and every hour; `engine sweep` runs it now.
func (e *Engine) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	dir := e.store.Dir()
	res := &SweepResult{Dir: dir}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", dir, err)
	}
	known := e.proj.Outputs()
	now := e.cfg.Clock()
	for _, ent := range entries {
		if !ent.Type().IsRegular() || !strings.HasPrefix(ent.Name(), "tool_") {
			continue
		}
		path := filepath.Join(dir, ent.Name())
		expires := now // unknown until looked at
		if o, ok := known[path]; ok {
			expires = o.Expires
		} else if info, err := ent.Info(); err == nil {
			expires = info.ModTime().Add(executor.OutputRetention)
		} else {
			continue
		}
		if now.Before(expires) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.cfg.Logger.Warn("sweeping an output file", "path", path, "err", err)
			continue
		}
		res.Deleted = append(res.Deleted, path)
	}
	// Files the log keeps that are gone from the directory are swept too,
	// so the projection matches the directory.
	for path := range known {
		if filepath.Dir(path) != dir || slices.Contains(res.Deleted, path) {
			continue
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			res.Deleted = append(res.Deleted, path)
		}
	}
	if len(res.Deleted) == 0 {
		return res, nil
	}
	slices.Sort(res.Deleted)
	if err := e.commitSubject(ctx, events.OutputSubject, events.KindSweep,
		[]events.Event{events.OutputFileSwept{Paths: res.Deleted}}); err != nil {
		return nil, fmt.Errorf("record the output sweep: %w", err)
	}
	return res, nil
}
