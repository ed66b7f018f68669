package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// plan is one step decided: per call, what was asked, the verdict and (after
// execute) the result.
type plan struct {
	run    string
	step   int
	last   uint64 // the run's last sequence when the step was decided
	limits executor.Limits
	epoch  uint64 // the host's lease epoch the calls run under (leaseEpoch)
	calls  []*planned
	// A step of one call, the usual one, keeps it, its events and its commit
	// here: one allocation.
	one    [1]planned
	onePtr [1]*planned
	evs    [5]events.Event
	commit events.Commit
}

// events returns an empty event slice with room for n.
func (p *plan) events(n int) []events.Event {
	if n <= len(p.evs) {
		return p.evs[:0]
	}
	return make([]events.Event, 0, n)
}

// planned is one call of a plan.
type planned struct {
	req      CallRequest
	identity string
	tool     *executor.Tool
	prepared *executor.Prepared
	verdict  events.PermissionDecided
	ticket   *events.TicketIssued      // the call waits for a human
	spilled  *executor.Spilled         // its whole output went to this file
	state    []executor.StateChange    // the run state it set
	terminal bool                      // result is set
	result   events.ToolResultRecorded // set for calls refused before execution, and after execute
	part     [1]events.Part            // result's parts when it has one
}

func (c *planned) allowed() bool { return c.verdict.Verdict == events.VerdictAllow }

func (c *planned) setResult(r executor.Result) {
	c.result, c.terminal = toEventResultIn(c.part[:0], c.req.ID, r), true
}

// runs reports whether the call executes in this step's own flow.
func (c *planned) runs() bool { return c.allowed() && c.ticket == nil }

// recordable returns args as they can be recorded: unchanged when they are
// JSON, else as a JSON string of their text (a call with malformed arguments
// is refused as invalid input, and the log still says what the model sent).
func recordable(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

// plan decides every call of req against the run as the projection holds it.
// When the step was already committed it returns the recorded outcome (same
// calls) or ErrConflict (other calls).
func (e *Engine) plan(req SubmitStepRequest) (*plan, *StepOutcome, error) {
	p := &plan{run: req.Run, step: req.Step}
	r, err := e.header(req.Run)
	if err != nil {
		return nil, nil, err
	}
	if r.Status == projection.StatusEnded {
		e.forget(r.ID)
		return nil, nil, fmt.Errorf("submit step %d: run %s: %w", req.Step, req.Run, ErrRunNotActive)
	}
	if err := divergedErr(r.ID, r.Diverged); err != nil {
		return nil, nil, err
	}
	s, err := e.stepOf(&r, req.Step) // a step committed already: the last, or an earlier one read for it
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
	cfg := e.config(&r)
	p.last, p.limits = r.LastSeq, cfg.limits
	var calls []planned
	if len(req.Calls) == 1 {
		calls, p.calls = p.one[:], p.onePtr[:]
	} else {
		calls, p.calls = make([]planned, len(req.Calls)), make([]*planned, len(req.Calls))
	}
	reg := e.effective()
	for i, cr := range req.Calls {
		call := executor.Call{Run: req.Run, Agent: cfg.agent, Step: req.Step, CallID: cr.ID, Location: cfg.location}
		c := &calls[i]
		c.req = cr
		e.decide(c, call, cfg, reg)
		p.calls[i] = c
	}
	return p, nil, nil
}

// decide takes one call through the four decisions, in order: visibility,
// availability, input, permission. Only the last can allow. It fills in c.
func (e *Engine) decide(c *planned, call executor.Call, cfg *runConfig, reg map[string]effectiveTool) {
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
	v := gate.Decide(cfg.narrowing, prepared.Requests(), cfg.rules, e.saved(cfg.project))
	switch v.Kind {
	case gate.KindAllow:
		c.verdict = events.PermissionDecided{CallID: cr.ID, Verdict: events.VerdictAllow, Reason: v.Reason,
			Rule: cfg.ruleRef(v.Rule), Requests: toEventRequests(prepared.Requests())}
		if tool.AwaitsInput() {
			c.ticket = e.newTicket(c, cfg, events.TicketInput, nil, cfg.ttl)
		}
	case gate.KindConfirm:
		c.verdict = events.PermissionDecided{CallID: cr.ID, Verdict: events.VerdictConfirm, Reason: v.Reason,
			Rule: cfg.ruleRef(v.Rule), Requests: toEventRequests(v.Asked)}
		c.ticket = e.newTicket(c, cfg, events.TicketPermission, v.Asked, ruleTTL(v.Rule, cfg.ttl))
	default:
		c.verdict.Requests = toEventRequests(prepared.Requests())
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
	er := toEventRule(*r)
	return &er
}

// oneCommit reports whether the step can be decided and settled in one
// commit: no call waits for a human, and no allowed call has an effect that
// must be guarded by a pre-effect commit.
func (p *plan) oneCommit() bool {
	for _, c := range p.calls {
		if c.ticket != nil || c.allowed() && c.tool.Descriptor().Effect == descriptor.SideEffecting {
			return false
		}
	}
	return true
}

// mayBeFitted reports whether committing may have shortened any of the
// plan's results (see fit): only when a bound on the step's events, decide
// and settle together, exceeds the commit budget.
func (p *plan) mayBeFitted(budget int) bool {
	n := boundOf(nil) + wrap
	for _, c := range p.calls {
		n += boundDecide(c) + boundResult(&c.result)
		if c.spilled != nil || len(c.state) > 0 {
			for _, ev := range c.sideEvents() {
				n += bound(ev)
			}
		}
		if n > budget {
			return true
		}
	}
	return false
}

// tickets returns the plan's tickets, in model order.
func (p *plan) tickets() []*events.TicketIssued {
	var ts []*events.TicketIssued
	for _, c := range p.calls {
		if c.ticket != nil {
			ts = append(ts, c.ticket)
		}
	}
	return ts
}

// decideEvents appends the events that precede any effect to evs.
func (p *plan) decideEvents(evs []events.Event) []events.Event {
	for _, c := range p.calls {
		evs = append(evs, events.ToolCallRequested{CallID: c.req.ID, Tool: c.req.Tool, Args: c.req.Args, Identity: c.identity}, c.verdict)
		if c.ticket != nil {
			evs = append(evs, *c.ticket)
		} else if c.allowed() && c.tool.Descriptor().Effect != descriptor.ReadOnly {
			evs = append(evs, events.ToolCallStarted{CallID: c.req.ID, Attempt: 1})
		}
	}
	return evs
}

// settleEvents appends to evs the events that record every terminal call's
// result and finalize the step, or say it awaits its tickets.
func (p *plan) settleEvents(evs []events.Event) []events.Event {
	for _, c := range p.calls {
		if c.terminal {
			evs = append(evs, c.result)
		}
		evs = append(evs, c.sideEvents()...)
	}
	if ts := p.tickets(); len(ts) > 0 {
		ids := make([]string, len(ts))
		for i, t := range ts {
			ids[i] = t.ID
		}
		return append(evs, events.StepAwaiting{Tickets: ids})
	}
	return append(evs, events.StepFinalized{Calls: len(p.calls)})
}

// outcome is what the model gets: every result, in model order — or, while
// calls wait for a human, no result yet and the tickets.
func (p *plan) outcome() *StepOutcome {
	if ts := p.tickets(); len(ts) > 0 {
		o := &StepOutcome{Run: p.run, Step: p.step}
		for _, t := range ts {
			o.Tickets = append(o.Tickets, TicketView{TicketIssued: *t, Run: p.run, Step: p.step})
		}
		return o
	}
	if len(p.calls) == 1 { // the usual step: one allocation
		c, one := p.calls[0], &oneOutcome{}
		one.o = StepOutcome{Run: p.run, Step: p.step, Final: true, Results: one.r[:]}
		one.r[0] = callResult(c.req.ID, c.req.Tool, c.verdict, c.result, &one.rule)
		return &one.o
	}
	o := &StepOutcome{Run: p.run, Step: p.step, Final: true, Results: make([]CallResult, len(p.calls))}
	for i, c := range p.calls {
		o.Results[i] = callResult(c.req.ID, c.req.Tool, c.verdict, c.result, nil)
	}
	return o
}

// oneOutcome is a one-call step's outcome with its result and rule.
type oneOutcome struct {
	o    StepOutcome
	r    [1]CallResult
	rule gate.Rule
}

// sameJSON reports whether two JSON documents are equal as values (null and
// absent are the same).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) > 0 && json.Unmarshal(a, &va) != nil {
		return false
	}
	if len(b) > 0 && json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sideEvents are what a settled call records besides its result: the output
// file it spilled to and the run state it set, in the same settle commit.
func (c *planned) sideEvents() []events.Event {
	var evs []events.Event
	if c.spilled != nil {
		evs = append(evs, spilledEvent(c.spilled))
	}
	for _, s := range c.state {
		evs = append(evs, events.StateCommand{CallID: c.req.ID, Key: s.Key, Value: s.Value})
	}
	return evs
}

// spilledEvent records an output file in the settle commit.
func spilledEvent(sp *executor.Spilled) events.OutputFileStored {
	return events.OutputFileStored{Path: sp.Path, Bytes: sp.Bytes, SHA256: sp.SHA256, Expires: sp.Expires}
}
