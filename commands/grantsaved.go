package commands

import (
	"context"
	"errors"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// grantRules turns the approvals a reply saves into the allow rules they
// stand for.
func grantRules(gs []events.ApprovalSaved) gate.Ruleset {
	rs := make(gate.Ruleset, len(gs))
	for i, g := range gs {
		rs[i] = gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved}
	}
	return rs
}

// newGrants are the approvals an "always" to ticket saves: each save
// pattern of the requests it approves (the ticket's, or its edited call's
// that asked), less those the project has in force already.
func (h *replier) newGrants(project, ticket string, approved []events.Request, principal string, grants []projection.Grant) []events.ApprovalSaved {
	have := map[[2]string]bool{}
	for _, g := range grants {
		if g.Project == project {
			have[[2]string{g.Action, g.Resource}] = true
		}
	}
	var out []events.ApprovalSaved
	for _, req := range approved {
		for _, pat := range req.Save {
			k := [2]string{req.Action, pat}
			if have[k] {
				continue
			}
			have[k] = true
			out = append(out, events.ApprovalSaved{ID: h.cfg.IDs.New(h.cfg.Clock()), Project: project,
				Action: req.Action, Resource: pat, Principal: principal, Ticket: ticket})
		}
	}
	return out
}

// approveProject lets other runs of the project use the approvals an
// "always" just saved (by ticket by, a ticket of run except): each pending
// ticket that now evaluates to allow is approved, its resolution naming by
// (so the audit names the grants that approved it), and its call runs.
// Best effort: a failure is logged, the ticket stays pending for a human.
func (h *replier) approveProject(ctx context.Context, project, except, by string) {
	for _, run := range h.proj.PendingRuns(project) {
		if run == except {
			continue
		}
		err := h.autoApprove(ctx, project, run, by)
		if errors.Is(err, ErrNotHolder) { // its calls run where its location is
			// A request of this host's own, even when the reply that saved the
			// approval was forwarded here.
			var done struct{}
			err = h.forwardRun(context.WithValue(ctx, forwardedKey{}, false), run, OpAutoApprove, autoApproveRequest{Project: project, Run: run, By: by}, &done, err)
		}
		if err != nil {
			h.cfg.Logger.Warn("auto-approving after an always reply", "run", run, "err", err)
		}
	}
}

// autoApprove approves the pending tickets of one run of project that the
// project's saved approvals now allow; by is the ticket whose "always"
// saved them.
func (h *replier) autoApprove(ctx context.Context, project, run, by string) error {
	held := h.lockRun(run)
	defer held.unlock()
	r, err := h.header(run)
	if err != nil || h.config(&r).project != project || r.Status != projection.StatusAwaiting {
		return err // a run of another project, or no longer waiting: its configuration is not read
	}
	if r.Snapshot.Place != nil {
		if err := h.runHere(&r); err != nil {
			return err // its location's holder approves it (approveProject forwards)
		}
	}
	saved := h.grants.saved(project)
	current := h.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).Rules
	reg := h.reg.effective()
	if r, err = h.header(run); err != nil {
		return err
	}
	cfg := h.config(&r)
	if cfg.project != project || r.Status != projection.StatusAwaiting {
		return nil
	}
	var approved []*projection.Ticket
	pending := otherPending(&r, "")
	for _, t := range pending {
		if t.Kind == events.TicketPermission && resume(t.Requests, cfg.rules, current, saved).Kind == gate.KindAllow {
			approved = append(approved, t)
		}
	}
	if len(approved) == 0 {
		return nil
	}
	s, err := h.stepOf(&r, approved[0].Step)
	if err != nil {
		return err
	}
	if busy := inFlight(&r, s); busy != nil { // its tickets stay pending for a human
		return busy
	}
	w := &progress{run: run, step: s.N, calls: len(s.Calls), from: at(&r), kind: events.KindResolve, limits: cfg.limits, place: cfg.placeAt()}
	for _, t := range approved {
		w.first = append(w.first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedAuto, Approved: true, By: by})
		h.approve(reg, cfg, &r, s, t, nil, w)
	}
	for _, t := range pending {
		if !slices.Contains(approved, t) {
			w.remaining = append(w.remaining, t.ID)
		}
	}
	return h.steps.advance(ctx, w)
}
