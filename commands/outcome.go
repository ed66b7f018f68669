package commands

import (
	"strings"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
	"github.com/stepgate/stepgate/projection"
)

// outcomeOf is the recorded outcome of a final step.
func outcomeOf(run string, s *projection.Step) *StepOutcome {
	o := &StepOutcome{Run: run, Step: s.N, Final: s.Final, Results: make([]CallResult, 0, len(s.Calls)), Host: s.Host}
	for _, c := range s.Calls {
		var d events.PermissionDecided
		if c.Decision != nil {
			d = *c.Decision
		}
		var r events.ToolResultRecorded
		if c.Result != nil {
			r = *c.Result
		}
		o.Results = append(o.Results, callResult(c.ID, c.Tool, d, r, nil))
	}
	return o
}

// callResult renders one call's result for the client. The deciding rule
// goes in slot when there is one (a new rule when slot is nil).
func callResult(id, tool string, d events.PermissionDecided, r events.ToolResultRecorded, slot *gate.Rule) CallResult {
	cr := CallResult{CallID: id, Tool: tool, Verdict: d.Verdict, IsError: r.IsError, Output: r.Structured}
	if d.Rule != nil {
		if slot == nil {
			slot = new(gate.Rule)
		}
		*slot = vocab.Rule(*d.Rule)
		cr.Rule = slot
	}
	if len(r.Parts) == 1 && r.Parts[0].Type == "text" { // the usual result
		cr.Content = r.Parts[0].Text
		return cr
	}
	var text []string
	for _, p := range r.Parts {
		if p.Type == "text" {
			text = append(text, p.Text)
			continue
		}
		cr.Parts = append(cr.Parts, ResultPart{Type: p.Type, MIME: p.MIME, Data: p.Data})
	}
	cr.Content = strings.Join(text, "\n")
	return cr
}
