package commands

import (
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
)

// The vocabulary has its own copies of rules, requests and parts so that it
// depends on nothing; these convert at the boundary.

func toEventRule(r gate.Rule) events.Rule {
	return events.Rule{Action: r.Action, Resource: r.Resource, Effect: string(r.Effect), Source: string(r.Source), TicketTTL: r.TicketTTL}
}

func fromEventRule(r events.Rule) gate.Rule {
	return gate.Rule{Action: r.Action, Resource: r.Resource, Effect: gate.Effect(r.Effect), Source: gate.Source(r.Source), TicketTTL: r.TicketTTL}
}

func toEventRules(rs gate.Ruleset) []events.Rule {
	out := make([]events.Rule, len(rs))
	for i, r := range rs {
		out[i] = toEventRule(r)
	}
	return out
}

func fromEventRules(rs []events.Rule) gate.Ruleset {
	out := make(gate.Ruleset, len(rs))
	for i, r := range rs {
		out[i] = fromEventRule(r)
	}
	return out
}

func toEventRequests(rs []descriptor.Request) []events.Request {
	if len(rs) == 0 {
		return nil
	}
	out := make([]events.Request, len(rs))
	for i, r := range rs {
		out[i] = events.Request{Action: r.Action, Resources: r.Resources, Save: r.Save, Ask: r.Ask}
	}
	return out
}

func toEventResult(callID string, r executor.Result) events.ToolResultRecorded {
	return toEventResultIn(nil, callID, r)
}

// toEventResultIn is toEventResult with its parts appended to dst.
func toEventResultIn(dst []events.Part, callID string, r executor.Result) events.ToolResultRecorded {
	for _, p := range r.Parts {
		dst = append(dst, events.Part{Type: p.Type, Text: p.Text, MIME: p.MIME, Data: p.Data})
	}
	return events.ToolResultRecorded{CallID: callID, Parts: dst, Structured: r.Structured, IsError: r.IsError}
}
