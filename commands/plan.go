package commands

import (
	"encoding/json"
	"reflect"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
)

// plan is one step decided: per call, what was asked, the verdict and (after
// execute) the result.
type plan struct {
	run    string
	step   int
	from   runAt // where the run stood when the step was decided
	limits executor.Limits
	place  placeAt // where its calls may run
	epoch  uint64  // the host's lease epoch the calls run under (leaseEpoch)
	calls  []*planned
	// A step of one call, the usual one, keeps it, its events and its commit
	// here: one allocation.
	one    [1]planned
	onePtr [1]*planned
	evs    [5]events.Event
	commit events.Commit
	// turn is the step's model turn while its commit is in flight
	// (stepturn.go): the step's first commit waits for it.
	turn *turnInFlight
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
	edit     *events.ArgsEdit          // an approval's edit: the call runs with edit.Args
	attempt  int                       // the execution's attempt, for its span (tracing only)
	refused  *executor.Refusal         // what the sandbox refused the call (see runContained)
	failed   bool                      // the call failed (see executor.Result.Failed)
	// escalation is the ticket a call the sandbox refused waits on, asking
	// to run again outside it (see escalate); the call is then not terminal.
	escalation *events.TicketIssued
	// escalated is the approved escalation ticket a call runs again for,
	// outside the sandbox.
	escalated string
}

func (c *planned) allowed() bool { return c.verdict.Verdict == events.VerdictAllow }

func (c *planned) setResult(r executor.Result) {
	c.result, c.terminal = toEventResultIn(c.part[:0], c.req.ID, r), true
	if c.edit != nil {
		c.result = withEditNote(c.result, c.edit)
	}
}

// withEditNote puts before r's parts the note that the call ran with the
// approver's arguments, when e is an edit (see EditedNote).
func withEditNote(r events.ToolResultRecorded, e *events.ArgsEdit) events.ToolResultRecorded {
	if e == nil {
		return r
	}
	r.Parts = append([]events.Part{{Type: "text", Text: EditedNote(e.Args)}}, r.Parts...)
	return r
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

// tickets returns the plan's tickets, in model order.
func (p *plan) tickets() []*events.TicketIssued {
	var ts []*events.TicketIssued
	for _, c := range p.calls {
		if c.ticket != nil {
			ts = append(ts, c.ticket)
		}
		if c.escalation != nil {
			ts = append(ts, c.escalation)
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
		if c.escalation != nil {
			evs = append(evs, *c.escalation)
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
		for _, c := range p.calls { // as `engine tickets` shows them: a caller that may not ask tickets needs nothing more
			if c.ticket != nil {
				o.Tickets = append(o.Tickets, TicketView{TicketIssued: client.TicketIssued(*c.ticket), Run: p.run, Step: p.step,
					Args: c.req.Args, Reason: c.verdict.Reason})
			}
			if c.escalation != nil {
				o.Tickets = append(o.Tickets, TicketView{TicketIssued: client.TicketIssued(*c.escalation), Run: p.run, Step: p.step,
					Args: c.req.Args, Reason: c.escalation.Escalation.Reason})
			}
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
