package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
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

// resume is the gate's verdict on a call whose ticket is answered (see
// gate.Resume): its requests against the run's pinned rules, the
// configuration's rules as they are now and the saved approvals that apply.
func resume(reqs []events.Request, pinned, current, saved gate.Ruleset) gate.Verdict {
	return gate.Resume(vocab.Requests(reqs), pinned, current, saved)
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

// Reply answers [Engine.Reply].
func (h *replier) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	arrived := time.Now() // for the resume latency (see Metrics.Resumed)
	switch req.Reply {
	case events.ReplyOnce, events.ReplyAlways, events.ReplyReject, events.ReplyAnswer:
	default:
		return nil, fmt.Errorf("reply %q: want once, always, reject or answer: %w", req.Reply, ErrInvalidRequest)
	}
	if req.Principal == "" {
		return nil, fmt.Errorf("reply to %s: who replies is required: %w", req.Ticket, ErrInvalidRequest)
	}
	if len(req.Args) > 0 && req.Reply != events.ReplyOnce && req.Reply != events.ReplyAlways {
		return nil, fmt.Errorf("reply %q to %s: edited arguments go with once or always: %w", req.Reply, req.Ticket, ErrInvalidRequest)
	}
	// A reply decides with authority, so against the log as it is now: the
	// ticket may have been issued, its tool replaced or a grant revoked on
	// another host a moment ago. Replies come at a person's pace; the sync
	// costs one round trip.
	if events.ValidID(req.Ticket) {
		if err := h.syncAll(ctx); err != nil {
			return nil, fmt.Errorf("reply to %s: %w", req.Ticket, err)
		}
	}
	run := h.proj.TicketRun(req.Ticket)
	if run == "" || (req.Run != "" && req.Run != run) {
		return nil, fmt.Errorf("ticket %q: %w", req.Ticket, ErrTicketNotFound)
	}
	if req.Reply != events.ReplyReject {
		var there ReplyResult
		if handled, err := h.elsewhere(ctx, run, OpReply, req, &there); handled {
			if err != nil {
				return nil, err
			}
			return &there, nil
		}
		if r, err := h.header(run); err == nil {
			if t := r.Ticket(req.Ticket); t != nil && t.Pending() {
				h.reg.mcp.forCalls(ctx, run, t.Tool) // an approved call runs here
			}
		}
	}
	rechecked := false
	for attempt := 0; ; attempt++ {
		changed := h.proj.Changed() // before the step is looked at: no result is missed
		res, grantProject, err := h.replyOnce(ctx, run, req)
		if busy := (*stepInFlight)(nil); errors.As(err, &busy) {
			h.pause(ctx, "reply-waits")
			if err := h.waitForResults(ctx, run, changed, err); err != nil {
				return nil, err
			}
			attempt--
			continue // validate again: the step's results came, or the ticket was answered
		}
		if errors.Is(err, step.ErrConflict) && attempt < maxRaceRetries {
			if rerr := h.catchUp(ctx, run); rerr != nil {
				return nil, rerr
			}
			continue // validate again: another host may have answered it
		}
		if err != nil && !rechecked {
			rechecked = true
			var again bool
			if again, err = h.recheck(ctx, run, err); again {
				continue // issued, or made to await, by a commit this host had not folded
			}
		}
		if err != nil {
			return nil, err
		}
		h.resumed(res, arrived)
		if grantProject != "" {
			h.approveProject(ctx, grantProject, run, req.Ticket)
		}
		return res, nil
	}
}

// replyOnce validates and commits one reply under the run's lock. It
// returns the project whose other runs an "always" may unblock.
func (h *replier) replyOnce(ctx context.Context, run string, req ReplyRequest) (*ReplyResult, string, error) {
	held := h.lockRun(run)
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
		grants = h.proj.Grants("")
	}
	if req.Reply != events.ReplyReject {
		if current, err = h.currentRules(run); err != nil {
			return nil, "", err
		}
	}
	reg := h.reg.effective()
	r, err := h.header(run)
	if err != nil {
		return nil, "", err
	}
	t := r.Ticket(req.Ticket)
	switch {
	case t == nil:
		return nil, "", fmt.Errorf("ticket %s: %w", req.Ticket, ErrTicketNotFound)
	case !t.Pending() || r.Status != projection.StatusAwaiting:
		return nil, "", fmt.Errorf("ticket %s: %w", req.Ticket, ErrTicketResolved)
	case t.Deadline != nil && !h.cfg.Clock().Before(*t.Deadline):
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
	if t.Kind == events.TicketEscalation && (req.Reply == events.ReplyAlways || len(req.Args) > 0) {
		return nil, "", fmt.Errorf("ticket %s is an escalation ticket: it is approved once, with the call's own arguments: %w", req.Ticket, ErrTicketKind)
	}
	s, err := h.stepOf(&r, t.Step)
	if err != nil {
		return nil, "", err
	}
	if busy := inFlight(&r, s); busy != nil {
		return nil, "", busy
	}
	cfg = h.config(&r)
	var ed edited
	if len(req.Args) > 0 {
		if ed.edit, ed.asked, err = h.checkEdit(reg, cfg, &r, s, t, req, current); err != nil {
			return nil, "", err
		}
	}
	if req.Pattern != "" {
		if req.Reply != events.ReplyAlways {
			return nil, "", fmt.Errorf("reply %q to %s: a narrowed pattern goes with always: %w", req.Reply, req.Ticket, ErrInvalidRequest)
		}
		_, asked := ed.requests(t)
		if ed.narrowed, err = narrowSave(t.ID, asked, req.Pattern); err != nil {
			return nil, "", err
		}
	}
	res.Step = t.Step
	w = progress{run: run, step: t.Step, calls: len(s.Calls), from: at(&r), kind: events.KindResolve, limits: cfg.limits, place: cfg.placeAt()}
	project = h.settleReply(&r, s, cfg, t, req, ed, &w, res, grants, current, reg)
	if err := h.steps.advance(ctx, &w); err != nil {
		return nil, "", err
	}
	if len(w.remaining) == 0 {
		if s, _ := h.step(run, w.step); s != nil && s.Final {
			res.Outcome = outcomeOf(run, s)
		}
	}
	return res, project, nil
}

// edited is an approval's edit (see checkEdit): nothing when the reply
// approves the model's arguments.
type edited struct {
	edit  *events.ArgsEdit
	asked []descriptor.Request // the edited call's requests that asked
	// narrowed are the approved requests that asked with the operator's
	// narrowed save pattern (see narrowSave); nil when there is none.
	narrowed []events.Request
}

// requests are what the approval approves: the edited call's requests, or
// the ticket's.
func (e edited) requests(t *projection.Ticket) (all, asked []events.Request) {
	if e.edit == nil {
		return t.Requests, t.Requests
	}
	return e.edit.Requests, vocab.EventRequests(e.asked)
}

// settleReply decides, from the run's header r, what the reply does to
// every pending ticket of the run, into w; s is the ticket's step and ed
// the reply's edit of the call's arguments. It returns the project when an
// "always" saved approvals.
func (h *replier) settleReply(r *projection.RunHeader, s *projection.Step, cfg *runConfig, t *projection.Ticket, req ReplyRequest, ed edited, w *progress, res *ReplyResult,
	grants []projection.Grant, current gate.Ruleset, reg map[string]effectiveTool) string {
	resolved := events.TicketResolved{Ticket: t.ID, CallID: t.CallID, Reply: req.Reply, Message: req.Message,
		Answers: req.Answers, Principal: req.Principal, Edit: ed.edit}
	others := otherPending(r, t.ID)
	if t.Kind == events.TicketEscalation && req.Reply == events.ReplyReject { // the sandboxed attempt is the result
		note := EscalationRejected + "."
		if req.Message != "" {
			note = EscalationRejected + ": " + req.Message
		}
		w.first = append(w.first, resolved, escalationResult(t, note))
		w.remaining = ids(others)
		return ""
	}
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
	approves, asked := ed.requests(t)
	if v := resume(approves, cfg.rules, current, nil); v.Kind == gate.KindBlock {
		resolved.Message = v.Reason
		w.first = append(w.first, resolved, events.PermissionDecided{CallID: t.CallID, Verdict: events.VerdictBlock, Reason: v.Reason, Rule: ruleRef(v.Rule)},
			resultEvent(t.CallID, "blocked: "+v.Reason))
		w.remaining = ids(others)
		return ""
	}
	if why := h.mayEscalate(r, t); why != "" {
		resolved.Message = why
		w.first = append(w.first, resolved, escalationResult(t, "[sandbox: the call did not run outside the sandbox: "+why+"]"))
		w.remaining = ids(others)
		return ""
	}
	resolved.Approved, res.Approved = true, true
	w.first = append(w.first, resolved)
	h.approve(reg, cfg, r, s, t, &resolved, w)
	project := ""
	var saved gate.Ruleset
	if req.Reply == events.ReplyAlways {
		if ed.narrowed != nil {
			asked = ed.narrowed
		}
		fresh := h.newGrants(cfg.project, t.ID, asked, req.Principal, grants)
		for _, g := range fresh {
			w.first = append(w.first, g)
		}
		res.Saved = fresh
		saved = append(savedRules(cfg.project, grants), grantRules(fresh)...)
		project = cfg.project
	}
	for _, o := range others {
		if saved != nil && o.Kind == events.TicketPermission && o.Step == t.Step && resume(o.Requests, cfg.rules, current, saved).Kind == gate.KindAllow {
			w.first = append(w.first, events.TicketResolved{Ticket: o.ID, CallID: o.CallID, Reply: events.ResolvedAuto,
				Approved: true, By: t.ID, Principal: req.Principal})
			h.approve(reg, cfg, r, s, o, nil, w)
			continue
		}
		w.remaining = append(w.remaining, o.ID)
	}
	inModelOrder(w.exec, s)
	return project
}

// approve adds an approved call to w: ToolCallStarted when it has an effect,
// then it runs after the resolve commit. res is the ticket's resolution
// when it carries answers or an edit of the arguments (nil otherwise).
func (h *replier) approve(reg map[string]effectiveTool, cfg *runConfig, r *projection.RunHeader, s *projection.Step, t *projection.Ticket, res *events.TicketResolved, w *progress) {
	c := s.Call(t.CallID)
	p := h.steps.rerun(reg, cfg, r, s, c, res)
	if t.Kind == events.TicketEscalation {
		p.escalated = t.ID
	}
	if p.terminal {
		w.first = append(w.first, p.result)
		return
	}
	if p.tool.Descriptor().Effect != descriptor.ReadOnly {
		w.first = append(w.first, events.ToolCallStarted{CallID: c.ID, Attempt: c.Attempts + 1})
	}
	w.exec = append(w.exec, p)
}

// mayEscalate says why escalation ticket t may not run its call outside
// the sandbox now; "" when it may (and for other tickets). Resuming never
// widens authority: the configuration as it is now must still say
// escalate: ask, and this host's own --sandbox floor, if it has one, is
// never escaped. It reads files.
func (h *replier) mayEscalate(r *projection.RunHeader, t *projection.Ticket) string {
	switch {
	case t.Kind != events.TicketEscalation:
		return ""
	case h.cfg.Sandbox.Sandboxed():
		return "this host's --sandbox floor contains every call it runs"
	case h.cfg.Policy == nil || !h.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).Sandbox.Escalates():
		return "the configuration no longer says escalate: ask"
	}
	return ""
}

// currentRules is the configuration's ruleset for the run's agent and
// location as it is now. It reads files.
func (h *replier) currentRules(run string) (gate.Ruleset, error) {
	r, err := h.header(run)
	if err != nil {
		return nil, err
	}
	return h.cfg.Policy(r.Snapshot.Agent, r.Snapshot.Location).Rules, nil
}
