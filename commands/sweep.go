package commands

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

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
//
// It looks at the projection's index of pending tickets, not at their runs:
// only a run with a ticket due is read, so a host with a hundred thousand
// runs waiting sweeps them in milliseconds and keeps none in memory.
func (e *Engine) SweepTickets(ctx context.Context) error {
	now := e.cfg.Clock()
	reg := e.effective()
	runs := map[string]bool{}
	e.proj.EachPending(func(t projection.PendingTicket) {
		if t.Deadline != nil && !now.Before(*t.Deadline) || !shown(reg, t.Tool, t.Identity) {
			runs[t.Run] = true
		}
	})
	var errs []error
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		if err := e.sweepRun(ctx, run); err != nil && !errors.Is(err, step.ErrConflict) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) sweepRun(ctx context.Context, run string) error {
	now := e.cfg.Clock()
	reg := e.effective()
	// Look before taking the run's lock: a reply holds it while the call it
	// approved runs, and the sweeper must not wait for that.
	r, err := e.header(run)
	if err != nil {
		return err
	}
	due := false
	for _, t := range otherPending(&r, "") {
		due = due || unanswerable(t, now, reg) != ""
	}
	if !due {
		return nil
	}
	held := e.lockRun(run)
	defer held.unlock()
	if r, err = e.header(run); err != nil {
		return err
	}
	pending := otherPending(&r, "")
	var settled []*projection.Ticket
	var first []events.Event
	for _, t := range pending {
		switch unanswerable(t, now, reg) {
		case events.ResolvedExpired:
			first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedExpired},
				resultEvent(t.CallID, ExpiredResult))
		case events.ResolvedStale:
			first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedStale},
				resultEvent(t.CallID, executor.StaleTool(t.Tool)))
		default:
			continue
		}
		settled = append(settled, t)
	}
	if len(settled) == 0 {
		return nil
	}
	s, err := e.stepOf(&r, settled[0].Step)
	if err != nil {
		return err
	}
	w := &progress{run: run, step: s.N, calls: len(s.Calls), last: r.LastSeq, kind: events.KindResolve, first: first}
	for _, t := range pending {
		if !slices.Contains(settled, t) {
			w.remaining = append(w.remaining, t.ID)
		}
	}
	return e.advance(ctx, w)
}

// unanswerable says why a pending ticket can no longer be answered — its
// deadline passed (ResolvedExpired) or its tool is no longer the one the
// model was shown (ResolvedStale) — or "" when it still can be.
func unanswerable(t *projection.Ticket, now time.Time, reg map[string]effectiveTool) string {
	switch {
	case t.Deadline != nil && !now.Before(*t.Deadline):
		return events.ResolvedExpired
	case !shown(reg, t.Tool, t.Identity):
		return events.ResolvedStale
	}
	return ""
}
