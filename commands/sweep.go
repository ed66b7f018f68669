package commands

import (
	"context"
	"errors"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// SweepTickets settles the pending tickets that can no longer be answered:
// past their deadline (the model reads that approval expired) or whose tool
// is no longer the identity the model was shown (a stale tool call). Hosts
// run it every second; when several race for one ticket, one commit wins and
// the others change nothing.
func (e *Engine) SweepTickets(ctx context.Context) error {
	runs := map[string]bool{}
	for _, run := range e.proj.Pending() {
		runs[run] = true
	}
	var errs []error
	for run := range runs {
		if err := e.sweepRun(ctx, run); err != nil && !errors.Is(err, step.ErrConflict) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) sweepRun(ctx context.Context, run string) error {
	unlock := e.lockRun(run)
	defer unlock()
	now := e.cfg.Clock()
	var w *progress
	reg := e.effective()
	if err := e.viewRun(run, func(r *projection.Run) {
		pending := otherPending(r, "")
		var settled []*projection.Ticket
		var first []events.Event
		for _, t := range pending {
			switch et, ok := reg[t.Tool]; {
			case t.Deadline != nil && !now.Before(*t.Deadline):
				first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedExpired},
					resultEvent(t.CallID, ExpiredResult))
			case !ok || et.identity != t.Identity:
				first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedStale},
					resultEvent(t.CallID, executor.StaleTool(t.Tool)))
			default:
				continue
			}
			settled = append(settled, t)
		}
		if len(settled) == 0 {
			return
		}
		s := r.Step(settled[0].Step)
		w = &progress{run: run, step: s.N, calls: len(s.Calls), last: r.LastSeq, kind: events.KindResolve, first: first}
		for _, t := range pending {
			if !slices.Contains(settled, t) {
				w.remaining = append(w.remaining, t.ID)
			}
		}
	}); err != nil || w == nil {
		return err
	}
	return e.advance(ctx, w)
}
