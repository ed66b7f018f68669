package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Recovery's results and limits.
const (
	// IndeterminateResult is what the model reads for a side-effecting call
	// that started before the engine stopped and has no result: it is never
	// run again silently.
	IndeterminateResult = "tool outcome is indeterminate: the engine stopped after the call started"
	// maxAttempts bounds how often a read-only or idempotent call runs.
	maxAttempts = 3
)

// Recover settles what a crash of this host left open, for every run whose
// open step this host committed last: a call that started and has no result
// runs again if it is read-only or idempotent (at most three attempts in
// all), and is settled as indeterminate otherwise; a step whose calls are
// all terminal is finalized. Steps left open by other hosts are theirs to
// recover. StartHost runs it once the projection has caught up.
func (e *Engine) Recover(ctx context.Context) error {
	var errs []error
	for _, run := range e.proj.OpenRuns() {
		if err := e.recoverRun(ctx, run); err != nil {
			errs = append(errs, fmt.Errorf("recover run %s: %w", run, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) recoverRun(ctx context.Context, run string) error {
	unlock := e.lockRun(run)
	defer unlock()
	var w *progress
	reg := e.effective()
	if err := e.viewRun(run, func(r *projection.Run) {
		s := r.Step(len(r.Steps))
		if s == nil || s.Final || s.Host != e.cfg.Host || r.Status == projection.StatusEnded {
			return
		}
		cfg := e.config(r)
		w = &progress{run: run, step: s.N, calls: len(s.Calls), last: r.LastSeq, kind: events.KindRecover, limits: cfg.limits}
		for i := range s.Calls {
			c := &s.Calls[i]
			if c.Terminal() || !inDoubt(r, c) {
				continue
			}
			p := e.rerun(reg, cfg, run, s.N, c, answersOf(r, c))
			switch {
			case p.terminal:
				w.first = append(w.first, p.result)
			case p.tool.Descriptor().Effect == descriptor.SideEffecting || c.Attempts >= maxAttempts:
				w.first = append(w.first, resultEvent(c.ID, IndeterminateResult))
			default:
				w.first = append(w.first, events.ToolCallStarted{CallID: c.ID, Attempt: c.Attempts + 1})
				w.exec = append(w.exec, p)
			}
		}
		for _, t := range otherPending(r, "") {
			w.remaining = append(w.remaining, t.ID)
		}
		if len(w.first) == 0 && len(w.remaining) > 0 {
			w = nil // only waiting for humans: nothing to recover
		}
	}); err != nil || w == nil {
		return err
	}
	return e.advance(ctx, w)
}

// inDoubt reports whether a call was cleared to run (allowed, or its ticket
// approved) but has no result.
func inDoubt(r *projection.Run, c *projection.Call) bool {
	if c.Decision == nil {
		return false
	}
	if c.Ticket != "" {
		t := r.Ticket(c.Ticket)
		return t != nil && t.Resolution != nil && t.Resolution.Approved
	}
	return c.Decision.Verdict == events.VerdictAllow
}

// answersOf returns the answers of a call's input ticket.
func answersOf(r *projection.Run, c *projection.Call) []byte {
	if t := r.Ticket(c.Ticket); t != nil && t.Resolution != nil {
		return t.Resolution.Answers
	}
	return nil
}
