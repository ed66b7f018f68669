package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// Model-visible results of calls that waited for a human.
const (
	RejectedResult        = "The user rejected this call."
	RejectedRelatedResult = "The user rejected a related call; this call did not run."
	ExpiredResult         = "Approval expired before an answer; the call did not run."
)

// RejectedWith is the result of a call rejected with feedback.
func RejectedWith(feedback string) string { return "The user rejected this call: " + feedback }

// Reply answers a ticket: once, always or reject (permission), answer or
// reject (input). It is validated first — unknown, already resolved,
// expired, stale, wrong kind — each failure with its own error and no commit.
// An approval is checked again against the run's pinned rules and the
// current configuration; a deny in either blocks the call. "always" saves the
// ticket's save patterns for the project and approves every other pending
// ticket of the project that now evaluates to allow. A reject cascades to
// the run's other pending tickets, and without a message ends the run
// declined. Approved calls run on this host; the step's results are in the
// answer once it is final.
func (e *Engine) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	arrived := time.Now() // for the resume latency (see Metrics.Resumed)
	switch req.Reply {
	case events.ReplyOnce, events.ReplyAlways, events.ReplyReject, events.ReplyAnswer:
	default:
		return nil, fmt.Errorf("reply %q: want once, always, reject or answer: %w", req.Reply, ErrInvalidRequest)
	}
	if req.Principal == "" {
		return nil, fmt.Errorf("reply to %s: who replies is required: %w", req.Ticket, ErrInvalidRequest)
	}
	// A reply decides with authority, so against the log as it is now: the
	// ticket may have been issued, its tool replaced or a grant revoked on
	// another host a moment ago. Replies come at a person's pace; the sync
	// costs one round trip.
	if events.ValidID(req.Ticket) {
		if err := e.syncAll(ctx); err != nil {
			return nil, fmt.Errorf("reply to %s: %w", req.Ticket, err)
		}
	}
	run := e.proj.TicketRun(req.Ticket)
	if run == "" || (req.Run != "" && req.Run != run) {
		return nil, fmt.Errorf("ticket %q: %w", req.Ticket, ErrTicketNotFound)
	}
	rechecked := false
	for attempt := 0; ; attempt++ {
		res, grantProject, err := e.replyOnce(ctx, run, req)
		if errors.Is(err, step.ErrConflict) && attempt < maxRaceRetries {
			if rerr := e.catchUp(ctx, run); rerr != nil {
				return nil, rerr
			}
			continue // validate again: another host may have answered it
		}
		if err != nil && !rechecked {
			rechecked = true
			var again bool
			if again, err = e.recheck(ctx, run, err); again {
				continue // issued, or made to await, by a commit this host had not folded
			}
		}
		if err != nil {
			return nil, err
		}
		e.resumed(res, arrived)
		if grantProject != "" {
			e.approveProject(ctx, grantProject, run)
		}
		return res, nil
	}
}

// replyOnce validates and commits one reply under the run's lock. It
// returns the project whose other runs an "always" may unblock.
func (e *Engine) replyOnce(ctx context.Context, run string, req ReplyRequest) (*ReplyResult, string, error) {
	held := e.lockRun(run)
	defer held.unlock()
	var (
		w       progress
		cfg     *runConfig
		err     error
		res     = &ReplyResult{Ticket: req.Ticket, Run: run}
		project string
		grants  []projection.Grant // only an "always" saves and reads grants
		current gate.Ruleset       // only an approval is checked again
	)
	// Both are read before the run's header, so that the header is the
	// latest read of the run.
	if req.Reply == events.ReplyAlways {
		grants = e.proj.Grants("")
	}
	if req.Reply != events.ReplyReject {
		if current, err = e.currentRules(run); err != nil {
			return nil, "", err
		}
	}
	reg := e.effective()
	r, err := e.header(run)
	if err != nil {
		return nil, "", err
	}
	t := r.Ticket(req.Ticket)
	switch {
	case t == nil:
		return nil, "", fmt.Errorf("ticket %s: %w", req.Ticket, ErrTicketNotFound)
	case !t.Pending() || r.Status != projection.StatusAwaiting:
		return nil, "", fmt.Errorf("ticket %s: %w", req.Ticket, ErrTicketResolved)
	case t.Deadline != nil && !e.cfg.Clock().Before(*t.Deadline):
		return nil, "", fmt.Errorf("ticket %s: deadline %s passed: %w", req.Ticket, t.Deadline.Format("2006-01-02T15:04:05Z07:00"), ErrTicketExpired)
	}
	if !shown(reg, t.Tool, t.Identity) {
		return nil, "", fmt.Errorf("ticket %s: tool %s is no longer the one the model was shown: %w", req.Ticket, t.Tool, ErrTicketStale)
	}
	fits := req.Reply == events.ReplyReject ||
		(t.Kind == events.TicketInput) == (req.Reply == events.ReplyAnswer)
	if !fits {
		return nil, "", fmt.Errorf("ticket %s is a %s ticket; reply %q does not fit: %w", req.Ticket, t.Kind, req.Reply, ErrTicketKind)
	}
	s, err := e.stepOf(&r, t.Step)
	if err != nil {
		return nil, "", err
	}
	cfg = e.config(&r)
	res.Step = t.Step
	w = progress{run: run, step: t.Step, calls: len(s.Calls), last: r.LastSeq, kind: events.KindResolve, limits: cfg.limits}
	project = e.settleReply(&r, s, cfg, t, req, &w, res, grants, current, reg)
	if err := e.advance(ctx, &w); err != nil {
		return nil, "", err
	}
	if len(w.remaining) == 0 {
		if s, _ := e.step(run, w.step); s != nil && s.Final {
			res.Outcome = outcomeOf(run, s)
		}
	}
	return res, project, nil
}

// settleReply decides, from the run's header r, what the reply does to
// every pending ticket of the run, into w; s is the ticket's step. It
// returns the project when an "always" saved approvals.
func (e *Engine) settleReply(r *projection.RunHeader, s *projection.Step, cfg *runConfig, t *projection.Ticket, req ReplyRequest, w *progress, res *ReplyResult,
	grants []projection.Grant, current gate.Ruleset, reg map[string]effectiveTool) string {
	resolved := events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: req.Reply, Message: req.Message,
		Answers: req.Answers, Principal: req.Principal}
	others := otherPending(r, t.ID)
	if req.Reply == events.ReplyReject {
		result := RejectedResult
		if req.Message != "" {
			result = RejectedWith(req.Message)
		} else {
			w.end = &events.RunEnded{Cause: events.CauseDeclined, Reason: "rejected by " + req.Principal}
		}
		w.first = append(w.first, resolved, resultEvent(t.CallID, result))
		for _, o := range others {
			w.first = append(w.first,
				events.TicketResolved{Ticket: o.ID, CallID: o.CallID, Reply: events.ResolvedCascade, By: t.ID, Principal: req.Principal},
				resultEvent(o.CallID, RejectedRelatedResult))
		}
		return ""
	}
	// An approval (or answers): check again against the pinned rules and the
	// configuration as it is now. Resuming never widens authority.
	if reason, rule, denied := recheck(t.Requests, cfg.rules, current); denied {
		resolved.Message = reason
		w.first = append(w.first, resolved, events.PermissionDecided{CallID: t.CallID, Verdict: events.VerdictBlock, Reason: reason, Rule: ruleRef(rule)},
			resultEvent(t.CallID, "blocked: "+reason))
		w.remaining = ids(others)
		return ""
	}
	resolved.Approved, res.Approved = true, true
	w.first = append(w.first, resolved)
	e.approve(reg, cfg, r, s, t, req.Answers, w)
	project := ""
	var saved gate.Ruleset
	if req.Reply == events.ReplyAlways {
		fresh := e.newGrants(cfg.project, t, req.Principal, grants)
		for _, g := range fresh {
			w.first = append(w.first, g)
		}
		saved = append(savedRules(cfg.project, grants), grantRules(fresh)...)
		project = cfg.project
	}
	for _, o := range others {
		if saved != nil && o.Kind == events.TicketPermission && o.Step == t.Step && allows(o.Requests, cfg.rules, current, saved) {
			w.first = append(w.first, events.TicketResolved{Ticket: o.ID, CallID: o.CallID, Reply: events.ResolvedAuto,
				Approved: true, By: t.ID, Principal: req.Principal})
			e.approve(reg, cfg, r, s, o, nil, w)
			continue
		}
		w.remaining = append(w.remaining, o.ID)
	}
	return project
}

// approve adds an approved call to w: ToolCallStarted when it has an effect,
// then it runs after the resolve commit.
func (e *Engine) approve(reg map[string]effectiveTool, cfg *runConfig, r *projection.RunHeader, s *projection.Step, t *projection.Ticket, answers []byte, w *progress) {
	c := s.Call(t.CallID)
	p := e.rerun(reg, cfg, r.ID, s.N, c, answers)
	if p.terminal {
		w.first = append(w.first, p.result)
		return
	}
	if p.tool.Descriptor().Effect != descriptor.ReadOnly {
		w.first = append(w.first, events.ToolCallStarted{CallID: c.ID, Attempt: c.Attempts + 1})
	}
	w.exec = append(w.exec, p)
}

// recheck reports a deny by the pinned rules or the current configuration.
func recheck(reqs []events.Request, pinned, current gate.Ruleset) (string, *gate.Rule, bool) {
	for _, req := range reqs {
		dr := descriptor.Request{Action: req.Action, Resources: req.Resources, Save: req.Save}
		for _, rs := range []gate.Ruleset{pinned, current} {
			if d := gate.EvaluateInput(dr, rs, nil); d.Effect == gate.Deny {
				v := gate.Decide(gate.Configured, []descriptor.Request{dr}, rs, nil)
				return v.Reason, v.Rule, true
			}
		}
	}
	return "", nil, false
}

// allows reports whether every request now evaluates to allow — saved
// approvals included, and never over a configured deny.
func allows(reqs []events.Request, pinned, current, saved gate.Ruleset) bool {
	for _, req := range reqs {
		dr := descriptor.Request{Action: req.Action, Resources: req.Resources, Save: req.Save}
		if req.Ask || gate.EvaluateInput(dr, pinned, saved).Effect != gate.Allow || gate.EvaluateInput(dr, current, nil).Effect == gate.Deny {
			return false // a request that always asks is never approved on another's behalf
		}
	}
	return true
}

// newGrants are the approvals an "always" saves: each save pattern of the
// ticket's requests, less those the project has in force already.
func (e *Engine) newGrants(project string, t *projection.Ticket, principal string, grants []projection.Grant) []events.ApprovalSaved {
	have := map[[2]string]bool{}
	for _, g := range grants {
		if g.Project == project {
			have[[2]string{g.Action, g.Resource}] = true
		}
	}
	var out []events.ApprovalSaved
	for _, req := range t.Requests {
		for _, pat := range req.Save {
			k := [2]string{req.Action, pat}
			if have[k] {
				continue
			}
			have[k] = true
			out = append(out, events.ApprovalSaved{ID: e.cfg.IDs.New(e.cfg.Clock()), Project: project,
				Action: req.Action, Resource: pat, Principal: principal, Ticket: t.ID})
		}
	}
	return out
}

func grantRules(gs []events.ApprovalSaved) gate.Ruleset {
	rs := make(gate.Ruleset, len(gs))
	for i, g := range gs {
		rs[i] = gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved}
	}
	return rs
}

// otherPending returns the run's pending tickets other than id.
func otherPending(r *projection.RunHeader, id string) []*projection.Ticket {
	var out []*projection.Ticket
	for i := range r.Tickets {
		if t := &r.Tickets[i]; t.Pending() && t.ID != id {
			out = append(out, t)
		}
	}
	return out
}

func ids(ts []*projection.Ticket) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// resultEvent is an error result the model reads for a call that did not run.
func resultEvent(callID, text string) events.ToolResultRecorded {
	return toEventResult(callID, executor.ErrorResult(text))
}

// approveProject lets other runs of the project use the approvals an
// "always" just saved: each pending ticket that now evaluates to allow is
// approved and its call runs. Best effort: a failure is logged, the ticket
// stays pending for a human.
func (e *Engine) approveProject(ctx context.Context, project, except string) {
	for _, run := range e.proj.PendingRuns(project) {
		if run == except {
			continue
		}
		if err := e.autoApprove(ctx, project, run); err != nil {
			e.cfg.Logger.Warn("auto-approving after an always reply", "run", run, "err", err)
		}
	}
}

// autoApprove approves the pending tickets of one run of project that the
// project's saved approvals now allow.
func (e *Engine) autoApprove(ctx context.Context, project, run string) error {
	held := e.lockRun(run)
	defer held.unlock()
	r, err := e.header(run)
	if err != nil || e.config(&r).project != project || r.Status != projection.StatusAwaiting {
		return err // a run of another project, or no longer waiting: its configuration is not read
	}
	saved := e.saved(project)
	current := e.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).Rules
	reg := e.effective()
	if r, err = e.header(run); err != nil {
		return err
	}
	cfg := e.config(&r)
	if cfg.project != project || r.Status != projection.StatusAwaiting {
		return nil
	}
	var approved []*projection.Ticket
	pending := otherPending(&r, "")
	for _, t := range pending {
		if t.Kind == events.TicketPermission && allows(t.Requests, cfg.rules, current, saved) {
			approved = append(approved, t)
		}
	}
	if len(approved) == 0 {
		return nil
	}
	s, err := e.stepOf(&r, approved[0].Step)
	if err != nil {
		return err
	}
	w := &progress{run: run, step: s.N, calls: len(s.Calls), last: r.LastSeq, kind: events.KindResolve, limits: cfg.limits}
	for _, t := range approved {
		w.first = append(w.first, events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: events.ResolvedAuto, Approved: true})
		e.approve(reg, cfg, &r, s, t, nil, w)
	}
	for _, t := range pending {
		if !slices.Contains(approved, t) {
			w.remaining = append(w.remaining, t.ID)
		}
	}
	return e.advance(ctx, w)
}

// currentRules is the configuration's ruleset for the run's agent and
// location as it is now. It reads files.
func (e *Engine) currentRules(run string) (gate.Ruleset, error) {
	r, err := e.header(run)
	if err != nil {
		return nil, err
	}
	return e.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).Rules, nil
}
