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

// SweepTickets answers [Engine.SweepTickets].
func (h *replier) SweepTickets(ctx context.Context) error {
	now := h.cfg.Clock()
	reg := h.reg.effective()
	runs := map[string]bool{}
	h.proj.EachPending(func(t projection.PendingTicket) {
		if t.Deadline != nil && !now.Before(*t.Deadline) || !shown(reg, t.Tool, t.Identity) {
			runs[t.Run] = true
		}
	})
	var errs []error
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		if err := h.sweepRun(ctx, run); err != nil && !errors.Is(err, step.ErrConflict) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (h *replier) sweepRun(ctx context.Context, run string) error {
	now := h.cfg.Clock()
	reg := h.reg.effective()
	// Look before taking the run's lock: a reply holds it while the call it
	// approved runs, and the sweeper must not wait for that.
	r, err := h.header(run)
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
	held := h.lockRun(run)
	defer held.unlock()
	if r, err = h.header(run); err != nil {
		return err
	}
	pending := otherPending(&r, "")
	var settled []*projection.Ticket
	var first []events.Event
	for _, t := range pending {
		switch unanswerable(t, now, reg) {
		case events.ResolvedExpired:
			result := resultEvent(t.CallID, ExpiredResult)
			if t.Kind == events.TicketEscalation {
				result = escalationResult(t, EscalationExpired)
			}
			first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedExpired}, result)
		case events.ResolvedStale:
			result := resultEvent(t.CallID, executor.StaleTool(t.Tool))
			if t.Kind == events.TicketEscalation {
				result = escalationResult(t, executor.StaleTool(t.Tool))
			}
			first = append(first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedStale}, result)
		default:
			continue
		}
		settled = append(settled, t)
	}
	if len(settled) == 0 {
		return nil
	}
	s, err := h.stepOf(&r, settled[0].Step)
	if err != nil {
		return err
	}
	if inFlight(&r, s) != nil {
		return nil // another host settles a call of the step first; the next sweep resolves these
	}
	w := &progress{run: run, step: s.N, calls: len(s.Calls), from: at(&r), kind: events.KindResolve, first: first}
	for _, t := range pending {
		if !slices.Contains(settled, t) {
			w.remaining = append(w.remaining, t.ID)
		}
	}
	return h.steps.advance(ctx, w)
}
