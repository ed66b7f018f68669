package commands

import (
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
	"github.com/stepgate/stepgate/projection"
)

// plan decides every call of req against the run as the projection holds it.
// When the step was already committed it returns the recorded outcome (same
// calls) or ErrConflict (other calls).
func (h *submitter) plan(req SubmitStepRequest) (*plan, *StepOutcome, error) {
	p := &plan{run: req.Run, step: req.Step}
	r, err := h.header(req.Run)
	if err != nil {
		return nil, nil, err
	}
	if r.Status == projection.StatusEnded {
		h.forget(r.ID)
		return nil, nil, fmt.Errorf("submit step %d: run %s: %w", req.Step, req.Run, ErrRunNotActive)
	}
	if err := divergedErr(r.ID, r.Diverged); err != nil {
		return nil, nil, err
	}
	s, err := h.stepOf(&r, req.Step) // a step committed already: the last, or an earlier one read for it
	if err != nil {
		return nil, nil, err
	}
	switch {
	case s != nil && !sameCalls(s, req.Calls):
		return nil, nil, fmt.Errorf("step %d of run %s was committed with other calls: %w", req.Step, req.Run, ErrConflict)
	case s != nil && !s.Final:
		return nil, nil, fmt.Errorf("step %d of run %s is still being settled: %w", req.Step, req.Run, ErrConflict)
	case s != nil:
		return nil, outcomeOf(r.ID, s), nil
	case req.Step != r.Steps+1:
		return nil, nil, fmt.Errorf("step %d of run %s: the next step is %d: %w", req.Step, req.Run, r.Steps+1, ErrStepOrder)
	}
	if prev := r.Step(req.Step - 1); prev != nil && !prev.Final {
		return nil, nil, fmt.Errorf("step %d of run %s: step %d is not final: %w", req.Step, req.Run, prev.N, ErrStepOrder)
	}
	cfg := h.config(&r)
	p.from, p.limits, p.place = at(&r), cfg.limits, cfg.placeAt()
	var calls []planned
	if len(req.Calls) == 1 {
		calls, p.calls = p.one[:], p.onePtr[:]
	} else {
		calls, p.calls = make([]planned, len(req.Calls)), make([]*planned, len(req.Calls))
	}
	reg := h.reg.effective()
	for i, cr := range req.Calls {
		call := executor.Call{Run: req.Run, Agent: cfg.agent, Step: req.Step, CallID: cr.ID, Location: cfg.location}
		c := &calls[i]
		c.req = cr
		h.decide(c, call, cfg, reg)
		p.calls[i] = c
	}
	return p, nil, nil
}

// decide takes one call through the four decisions, in order: visibility,
// availability, input, permission. Only the last can allow. It fills in c.
func (h *submitter) decide(c *planned, call executor.Call, cfg *runConfig, reg map[string]effectiveTool) {
	cr := c.req
	refuse := func(msg string) {
		c.req.Args = recordable(cr.Args)
		c.verdict = events.PermissionDecided{CallID: cr.ID, Verdict: events.VerdictReject, Reason: msg}
		c.setResult(executor.ErrorResult(msg))
	}
	if cfg.narrowing != gate.Configured {
		c.req.Args = recordable(cr.Args)
		block(c, cfg, gate.Verdict{Kind: gate.KindBlock, Reason: gate.DisabledReason})
		return
	}
	identity, advertised := cfg.catalog[cr.Tool]
	if !advertised {
		refuse(executor.UnknownTool(cr.Tool))
		return
	}
	c.identity = identity
	tool, why := resolveTool(reg, cr.Tool, identity)
	if tool == nil {
		refuse(why)
		return
	}
	prepared, err := tool.Prepare(call, cr.Args)
	if err != nil {
		var ie *executor.InputError
		if errors.As(err, &ie) {
			refuse(ie.Error())
		} else {
			refuse(executor.InvalidInput(err.Error()))
		}
		return
	}
	c.tool, c.prepared = tool, prepared
	// Whatever the verdict, it records what the call saw (edit: the digest the
	// approver is shown; the real paths); set last, as block replaces the verdict.
	defer recordSeen(&c.verdict, prepared)
	v := gate.Decide(cfg.narrowing, prepared.Requests(), cfg.rules, h.grants.saved(cfg.project))
	switch v.Kind {
	case gate.KindAllow:
		c.verdict = events.PermissionDecided{CallID: cr.ID, Verdict: events.VerdictAllow, Reason: v.Reason,
			Rule: cfg.ruleRef(v.Rule), Requests: vocab.EventRequests(prepared.Requests())}
		if tool.AwaitsInput() {
			c.ticket = h.newTicket(c, cfg, events.TicketInput, nil, mcpTTL(cfg.mcp, cr.Tool, cfg.ttl))
		}
	case gate.KindConfirm:
		c.verdict = events.PermissionDecided{CallID: cr.ID, Verdict: events.VerdictConfirm, Reason: v.Reason,
			Rule: cfg.ruleRef(v.Rule), Requests: vocab.EventRequests(v.Asked)}
		c.ticket = h.newTicket(c, cfg, events.TicketPermission, v.Asked, mcpTTL(cfg.mcp, cr.Tool, ruleTTL(v.Rule, cfg.ttl)))
	default:
		c.verdict.Requests = vocab.EventRequests(prepared.Requests())
		block(c, cfg, v)
	}
}

// block settles c as blocked by v; the model reads "blocked: <reason>".
func block(c *planned, cfg *runConfig, v gate.Verdict) {
	reqs := c.verdict.Requests
	c.verdict = events.PermissionDecided{CallID: c.req.ID, Verdict: events.VerdictBlock, Reason: v.Reason,
		Rule: cfg.ruleRef(v.Rule), Requests: reqs}
	c.setResult(executor.ErrorResult("blocked: " + v.Reason))
}

func ruleRef(r *gate.Rule) *events.Rule {
	if r == nil {
		return nil
	}
	er := vocab.EventRule(*r)
	return &er
}
